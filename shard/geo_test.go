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
