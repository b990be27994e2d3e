package shard

import (
	"fmt"
	"strings"
	"testing"
)

// Geo tests: scripts with the exact replies of Redis 7.0.15 (replayable:
// REDSHARD_REDIS_ADDR=127.0.0.1:7301 go test -run TestGeoScriptsMatchRealRedis
// ./shard/), then GEOADD's log record.

const nullArr2 = "*-1\r\n"

var geoScripts = []ksScript{
	{"geoadd geopos geodist geohash", []ksStep{
		{cmd: "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", want: num(2)},
		{cmd: "GEOADD g NX CH 13.361389 38.115556 Palermo 2 3 x", want: num(1)},
		{cmd: "GEOADD g XX NX 1 1 a", want: syntax},
		{cmd: "GEOADD g 1 1 a 2", want: syntax},
		{cmd: "GEOADD g 200 100 bad", want: zErr("ERR invalid longitude,latitude pair 200.000000,100.000000")},
		{cmd: "GEOADD g abc 1 bad", want: notFlt},
		{cmd: "GEOADD g 1 85.06 bad", want: zErr("ERR invalid longitude,latitude pair 1.000000,85.060000")},
		{cmd: "ZSCORE g Palermo", want: bulk("3479099956230698")},
		{cmd: "GEOPOS g Palermo Catania nosuch", want: zArr(
			zArr(bulk("13.36138933897018433"), bulk("38.11555639549629859")),
			zArr(bulk("15.08726745843887329"), bulk("37.50266842333162032")),
			nullArr2)},
		{cmd: "GEODIST g Palermo Catania", want: bulk("166274.1516")},
		{cmd: "GEODIST g Palermo Catania km", want: bulk("166.2742")},
		{cmd: "GEODIST g Palermo Catania MI", want: bulk("103.3182")},
		{cmd: "GEODIST g Palermo Catania ft", want: bulk("545518.8700")},
		{cmd: "GEODIST g Palermo Catania yd", want: zErr("ERR unsupported unit provided. please use M, KM, FT, MI")},
		{cmd: "GEODIST g Palermo Catania km x", want: syntax},
		{cmd: "GEODIST g Palermo nosuch", want: null2},
		{cmd: "GEODIST nokey a b", want: null2},
		{cmd: "GEOHASH g Palermo Catania nosuch", want: zArr(bulk("sqc8b49rny0"), bulk("sqdtr74hyu0"), null2)},
		{cmd: "GEOHASH nokey a", want: zArr(null2)},
		{cmd: "GEOPOS nokey a", want: zArr(nullArr2)},
		{cmd: "GEOPOS g", want: zArr()},
		{cmd: "GEOADD g 0 0 zero -180 -85.05112878 sw 180 85.05112878 ne", want: num(3)},
		{cmd: "GEOPOS g zero sw ne x", want: zArr(
			zArr(bulk("0.00000268220901489"), bulk("0.00000126736058093")),
			zArr(bulk("-179.99999731779098511"), bulk("-85.05112751263942528")),
			zArr(bulk("180"), bulk("85.0511287799999991")),
			zArr(bulk("2.00000256299972534"), bulk("3.00000091215010656")))},
		{cmd: "GEOHASH g zero sw ne", want: zArr(bulk("s0000000000"), bulk("00bh0hbj200"), bulk("bp05b5048p0"))},
		{cmd: "GEODIST g zero x", want: bulk("400975.6865")},
		{cmd: "GEOADD g CH XX 13.361389 38.115556 x", want: num(1)},
		{cmd: "HELLO 3"},
		{cmd: "GEOPOS g Palermo nosuch", want: zArr(zArr(zDbl3("13.36138933897018433"), zDbl3("38.11555639549629859")), "_\r\n")},
		{cmd: "GEODIST g Palermo nosuch", want: null3},
		{cmd: "HELLO 2"},
		{cmd: "SET s x", want: ok},
		{cmd: "GEOADD s 1 1 a", want: wrong},
		{cmd: "GEOPOS s a", want: wrong},
		{cmd: "GEODIST s a b", want: wrong},
		{cmd: "GEOHASH s a", want: wrong},
	}},
}

func init() {
	geoScripts = append(geoScripts, ksScript{"georadius geosearch", []ksStep{
		{cmd: "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1 17.241510 38.788135 edge2 13.583333 37.316667 Agrigento", want: num(5)},
		// No sort: the order of the cells, then of the scores in each.
		{cmd: "GEORADIUS Sicily 15 37 200 km WITHDIST", want: zArr(
			zArr(bulk("Agrigento"), bulk("130.4235")), zArr(bulk("Palermo"), bulk("190.4424")), zArr(bulk("Catania"), bulk("56.4413")))},
		{cmd: "GEORADIUS Sicily 15 37 200 km WITHCOORD WITHDIST WITHHASH", want: zArr(
			zArr(bulk("Agrigento"), bulk("130.4235"), num(3479030013248308), zArr(bulk("13.5833314061164856"), bulk("37.31666804993816555"))),
			zArr(bulk("Palermo"), bulk("190.4424"), num(3479099956230698), zArr(bulk("13.36138933897018433"), bulk("38.11555639549629859"))),
			zArr(bulk("Catania"), bulk("56.4413"), num(3479447370796909), zArr(bulk("15.08726745843887329"), bulk("37.50266842333162032"))))},
		{cmd: "GEORADIUS Sicily 15 37 200 km ASC", want: bulks("Catania", "Agrigento", "Palermo")},
		{cmd: "GEORADIUS Sicily 15 37 200 km DESC COUNT 2", want: bulks("Palermo", "Agrigento")},
		{cmd: "GEORADIUS Sicily 15 37 200 km COUNT 1 ANY", want: bulks("Agrigento")},
		{cmd: "GEORADIUS Sicily 15 37 200 km ANY", want: zErr("ERR the ANY argument requires COUNT argument")},
		{cmd: "GEORADIUS Sicily 15 37 200 km COUNT 0", want: zErr("ERR COUNT must be > 0")},
		{cmd: "GEORADIUS Sicily 15 37 -1 km", want: zErr("ERR radius cannot be negative")},
		{cmd: "GEORADIUS Sicily 15 37 abc km", want: zErr("ERR need numeric radius")},
		{cmd: "GEORADIUS Sicily 15 37 200 yd", want: zErr("ERR unsupported unit provided. please use M, KM, FT, MI")},
		{cmd: "GEORADIUS Sicily 200 37 200 km", want: zErr("ERR invalid longitude,latitude pair 200.000000,37.000000")},
		{cmd: "GEORADIUS Sicily 15 37 200 km STORE dst", want: num(3)},
		{cmd: "ZRANGE dst 0 -1 WITHSCORES", want: bulks("Agrigento", "3479030013248308", "Palermo", "3479099956230698", "Catania", "3479447370796909")},
		{cmd: "GEORADIUS Sicily 15 37 200 km STOREDIST dst{Sicily}", want: num(3)},
		{cmd: "ZRANGE dst{Sicily} 0 0 WITHSCORES", want: bulks("Catania", "56.441257870158204")},
		{cmd: "GEORADIUS Sicily 15 37 200 km STORE dst WITHDIST", want: zErr("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options")},
		{cmd: "GEORADIUS Sicily 15 37 1 km STORE dst", want: num(0)},
		{cmd: "EXISTS dst", want: num(0)},
		{cmd: "GEORADIUS_RO Sicily 15 37 200 km STORE dst", want: syntax},
		{cmd: "GEORADIUSBYMEMBER Sicily Agrigento 100 km", want: bulks("Agrigento", "Palermo")},
		{cmd: "GEORADIUSBYMEMBER Sicily nosuch 100 km", want: zErr("ERR could not decode requested zset member")},
		{cmd: "GEORADIUSBYMEMBER nokey nosuch 100 km", want: zArr()},
		{cmd: "GEORADIUSBYMEMBER nokey nosuch 100 km STORE dst", want: num(0)},
		{cmd: "GEORADIUSBYMEMBER_RO Sicily Agrigento 100 km WITHDIST ASC", want: zArr(zArr(bulk("Agrigento"), bulk("0.0000")), zArr(bulk("Palermo"), bulk("90.9778")))},
		{cmd: "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHDIST", want: zArr(
			zArr(bulk("Catania"), bulk("56.4413")), zArr(bulk("Agrigento"), bulk("130.4235")), zArr(bulk("Palermo"), bulk("190.4424")),
			zArr(bulk("edge2"), bulk("279.7403")), zArr(bulk("edge1"), bulk("279.7405")))},
		{cmd: "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 300 km", want: syntax},
		{cmd: "GEOSEARCH Sicily BYRADIUS 300 km ASC WITHDIST", want: zErr("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH")},
		{cmd: "geosearch Sicily FROMLONLAT 15 37 ASC WITHDIST", want: zErr("ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch")},
		{cmd: "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 10 km BYBOX 1 1 km", want: syntax},
		{cmd: "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km", want: zErr("ERR height or width cannot be negative")},
		{cmd: "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 x km", want: zErr("ERR need numeric height")},
		{cmd: "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 300 km STORE x", want: syntax},
		{cmd: "GEOSEARCH nokey FROMMEMBER x BYRADIUS 300 km", want: zArr()},
		{cmd: "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 3 STOREDIST", want: num(3)},
		{cmd: "ZRANGE dst 0 -1", want: bulks("Catania", "Agrigento", "Palermo")},
		{cmd: "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km WITHDIST", want: zErr("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")},
		{cmd: "GEOSEARCHSTORE dst nokey FROMLONLAT 15 37 BYBOX 400 400 km", want: num(0)},
		{cmd: "EXISTS dst", want: num(0)},
		{cmd: "GEORADIUS Sicily 15 37 0 km", want: zArr()},
		// Near the antimeridian and the poles.
		{cmd: "GEOADD pts 0 0 a 0.001 0.001 b -0.001 -0.001 c 179.999 0 d -179.999 0 e 0 85 f 0 -85 g", want: num(7)},
		{cmd: "GEOSEARCH pts FROMLONLAT 0 0 BYRADIUS 1 km ASC WITHDIST", want: zArr(
			zArr(bulk("a"), bulk("0.0003")), zArr(bulk("b"), bulk("0.1573")), zArr(bulk("c"), bulk("0.1573")))},
		// Redis's cells do not wrap: e, 0.11 km away across the
		// antimeridian, is not found.
		{cmd: "GEOSEARCH pts FROMLONLAT 180 0 BYRADIUS 100 km ASC", want: bulks("d")},
		{cmd: "GEOSEARCH pts FROMLONLAT 0 84.9 BYBOX 100 100 km ASC WITHDIST", want: zArr(zArr(bulk("f"), bulk("11.1226")))},
		{cmd: "GEOSEARCH pts FROMLONLAT 0 0 BYRADIUS 20000 km COUNT 3 ANY", want: bulks("a", "b", "f")},
		{cmd: "GEOSEARCH pts FROMLONLAT 0 0 BYRADIUS 20000 km COUNT 3", want: bulks("a", "b", "c")},
		{cmd: "SET str x", want: ok},
		{cmd: "GEORADIUS str 15 37 200 km", want: wrong},
		{cmd: "GEOSEARCH str FROMLONLAT 0 0 BYRADIUS 1 km", want: wrong},
	}})
}

func TestGeoScripts(t *testing.T) {
	for _, n := range []int{1, 4} {
		for _, sc := range geoScripts {
			t.Run(fmt.Sprintf("%s/shards=%d", sc.name, n), func(t *testing.T) {
				c := ksCtx(n)
				for i, st := range sc.steps {
					if got := zDo(t, c, st.args()...); st.want != "" && got != st.want {
						t.Errorf("step %d %q: got %q, want %q", i, st.args(), got, st.want)
					}
				}
			})
		}
	}
}

func TestGeoScriptsMatchRealRedis(t *testing.T) {
	send := realRedis(t)
	for _, sc := range geoScripts {
		t.Run(sc.name, func(t *testing.T) {
			send("HELLO", "2")
			send("FLUSHALL")
			for i, st := range sc.steps {
				got := send(st.args()...)
				if strings.EqualFold(st.args()[0], "hello") || st.fake {
					continue
				}
				if st.want != "" && got != st.want {
					t.Errorf("step %d %q: redis replied %q, script wants %q", i, st.args(), got, st.want)
				}
			}
		})
	}
}

// TestGeoaddLogsZadd: GEOADD is logged as the ZADD Redis replaces it with
// (options kept, each point as its 52-bit score), and logs nothing when it
// changes nothing.
func TestGeoaddLogsZadd(t *testing.T) {
	c := ksCtx(1)
	zDo(t, c, "GEOADD", "g", "CH", "13.361389", "38.115556", "Palermo")
	if !c.Prop.Custom || len(c.Prop.Cmds) != 1 {
		t.Fatalf("propagation %+v, want one custom record", c.Prop)
	}
	var got []string
	for _, a := range c.Prop.Cmds[0] {
		got = append(got, string(a))
	}
	if want := "zadd g CH 3479099956230698 Palermo"; strings.Join(got, " ") != want {
		t.Fatalf("logged %q, want %q", strings.Join(got, " "), want)
	}
	zDo(t, c, "GEOADD", "g", "13.361389", "38.115556", "Palermo")
	if c.Prop.Dirty != 0 || len(c.Prop.Cmds) != 0 {
		t.Fatalf("unchanged GEOADD propagated %+v", c.Prop)
	}
}
