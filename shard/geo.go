package shard

import (
	"math"
	"strconv"
)

// Geo commands (Redis 7.0 geo.c, geohash.c, geohash_helper.c). A geo set is a
// sorted set whose scores are 52-bit interleaved geohashes, so GEOADD is a
// ZADD of encoded scores, logged as that ZADD, as Redis propagates it.
// GEORADIUS, GEORADIUSBYMEMBER, GEOSEARCH and GEOSEARCHSTORE are not here
// yet: they answer "unknown command".

var geoCommands = []Command{
	{Name: "geoadd", Run: cmdGeoadd},
	{Name: "geopos", Run: cmdGeopos},
	{Name: "geodist", Run: cmdGeodist},
	{Name: "geohash", Run: cmdGeohash},
}

// The WGS84 limits Redis indexes (EPSG:900913 / Web Mercator).
const (
	geoLongMin = -180.0
	geoLongMax = 180.0
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoStepMax = 26 // 52 bits

	earthRadiusInMeters = 6372797.560856
)

// geohashEncode interleaves the fixed-point offsets of latitude (even bits)
// and longitude (odd bits) within the ranges given, at step bits each
// (geohashEncode). ok is false outside the ranges.
func geohashEncode(longMin, longMax, latMin, latMax, longitude, latitude float64, step uint) (uint64, bool) {
	if longitude > geoLongMax || longitude < geoLongMin || latitude > geoLatMax || latitude < geoLatMin {
		return 0, false
	}
	if latitude < latMin || latitude > latMax || longitude < longMin || longitude > longMax {
		return 0, false
	}
	latOffset := (latitude - latMin) / (latMax - latMin)
	longOffset := (longitude - longMin) / (longMax - longMin)
	latOffset *= float64(uint64(1) << step)
	longOffset *= float64(uint64(1) << step)
	return interleave64(uint32(latOffset), uint32(longOffset)), true
}

// geohashEncodeWGS84 is the 52-bit score GEOADD stores for a point.
func geohashEncodeWGS84(longitude, latitude float64) (uint64, bool) {
	return geohashEncode(geoLongMin, geoLongMax, geoLatMin, geoLatMax, longitude, latitude, geoStepMax)
}

// interleave64 puts the bits of x in the even positions and those of y in
// the odd ones.
func interleave64(x, y uint32) uint64 {
	return spread32(x) | spread32(y)<<1
}

func spread32(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

func squash64(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// geohashDecodeWGS84 returns the centre of the cell a 52-bit score names,
// clamped to the indexed limits (geohashDecodeToLongLatWGS84).
func geohashDecodeWGS84(bits uint64) (longitude, latitude float64) {
	ilato, ilono := squash64(bits), squash64(bits>>1)
	scale := float64(uint64(1) << geoStepMax)
	latScale, longScale := geoLatMax-geoLatMin, geoLongMax-geoLongMin
	latMin := geoLatMin + (float64(ilato)*1.0/scale)*latScale
	latMax := geoLatMin + ((float64(ilato)+1)*1.0/scale)*latScale
	longMin := geoLongMin + (float64(ilono)*1.0/scale)*longScale
	longMax := geoLongMin + ((float64(ilono)+1)*1.0/scale)*longScale
	longitude = math.Min(math.Max((longMin+longMax)/2, geoLongMin), geoLongMax)
	latitude = math.Min(math.Max((latMin+latMax)/2, geoLatMin), geoLatMax)
	return longitude, latitude
}

func degRad(ang float64) float64 { return ang * (math.Pi / 180.0) }

// geohashGetDistance is the haversine distance in meters on Redis's sphere.
func geohashGetDistance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	lon1r, lon2r := degRad(lon1d), degRad(lon2d)
	v := math.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		// Same longitude: the distance along the meridian.
		return earthRadiusInMeters * math.Abs(degRad(lat2d)-degRad(lat1d))
	}
	lat1r, lat2r := degRad(lat1d), degRad(lat2d)
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + math.Cos(lat1r)*math.Cos(lat2r)*v*v
	return 2.0 * earthRadiusInMeters * math.Asin(math.Sqrt(a))
}

// geoUnitFactor returns meters per unit, or false with Redis's error replied.
func geoUnitFactor(c *Ctx, unit []byte) (float64, bool) {
	switch {
	case EqualFold(unit, "m"):
		return 1, true
	case EqualFold(unit, "km"):
		return 1000, true
	case EqualFold(unit, "ft"):
		return 0.3048, true
	case EqualFold(unit, "mi"):
		return 1609.34, true
	}
	c.Err("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// geoReplyCoord replies one coordinate as addReplyHumanLongDouble: a bulk
// string of "%.17Lf" without trailing zeros (RESP2) or a RESP3 double.
func geoReplyCoord(c *Ctx, f float64) {
	s := strconv.FormatFloat(f, 'f', 17, 64)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if len(s) > 1 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	if s == "-0" {
		s = "0"
	}
	if c.Proto >= 3 {
		c.Out = append(c.Out, ',')
		c.Out = append(c.Out, s...)
		c.Out = append(c.Out, '\r', '\n')
		return
	}
	c.BulkStr(s)
}

// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
func cmdGeoadd(c *Ctx, argv [][]byte) {
	nx, xx := false, false
	longidx := 2
	for ; longidx < len(argv); longidx++ {
		switch opt := argv[longidx]; {
		case EqualFold(opt, "nx"):
			nx = true
		case EqualFold(opt, "xx"):
			xx = true
		case EqualFold(opt, "ch"):
		default:
			goto parsed
		}
	}
parsed:
	if (len(argv)-longidx)%3 != 0 || xx && nx {
		c.Err(ErrSyntax)
		return
	}
	elements := (len(argv) - longidx) / 3
	zargv := make([][]byte, 0, longidx+2*elements)
	zargv = append(zargv, []byte("zadd"))
	zargv = append(zargv, argv[1:longidx]...)
	for i := 0; i < elements; i++ {
		p := argv[longidx+3*i:]
		lon, ok1 := parseScore(p[0])
		lat, ok2 := parseScore(p[1])
		if !ok1 || !ok2 {
			c.Err(ErrNotFloat)
			return
		}
		bits, ok := geohashEncodeWGS84(lon, lat)
		if !ok {
			c.Err("ERR invalid longitude,latitude pair " + strconv.FormatFloat(lon, 'f', 6, 64) + "," + strconv.FormatFloat(lat, 'f', 6, 64))
			return
		}
		zargv = append(zargv, strconv.AppendUint(nil, bits, 10), p[2])
	}
	// Redis replaces the command vector and calls ZADD: the reply, the
	// keyspace event ("zadd") and the log record are ZADD's.
	zaddGeneric(c, zargv, 0)
	if c.Prop.Dirty > 0 && !c.Prop.Custom {
		c.Prop.Custom = true
		c.Prop.Cmds = append(c.Prop.Cmds, zargv)
	}
}

// geoScores returns the geo set at key for reading, nil when the key is
// missing; ok is false after WRONGTYPE.
func geoScores(c *Ctx, key []byte) (*zset, bool) {
	_, z, ok := zsetAt(c, c.DBOf(key), key, false)
	return z, ok
}

// GEOPOS key [member ...]
func cmdGeopos(c *Ctx, argv [][]byte) {
	z, ok := geoScores(c, argv[1])
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		var score float64
		found := false
		if z != nil {
			score, found = z.find(m)
		}
		if !found {
			c.NullArray()
			continue
		}
		lon, lat := geohashDecodeWGS84(uint64(score))
		c.Array(2)
		geoReplyCoord(c, lon)
		geoReplyCoord(c, lat)
	}
}

// GEODIST key member1 member2 [M|KM|FT|MI]
func cmdGeodist(c *Ctx, argv [][]byte) {
	factor := 1.0
	if len(argv) == 5 {
		var ok bool
		if factor, ok = geoUnitFactor(c, argv[4]); !ok {
			return
		}
	} else if len(argv) > 5 {
		c.Err(ErrSyntax)
		return
	}
	z, ok := geoScores(c, argv[1])
	if !ok {
		return
	}
	if z == nil {
		c.Null()
		return
	}
	s1, ok1 := z.find(argv[2])
	s2, ok2 := z.find(argv[3])
	if !ok1 || !ok2 {
		c.Null()
		return
	}
	lon1, lat1 := geohashDecodeWGS84(uint64(s1))
	lon2, lat2 := geohashDecodeWGS84(uint64(s2))
	c.BulkStr(strconv.FormatFloat(geohashGetDistance(lon1, lat1, lon2, lat2)/factor, 'f', 4, 64))
}

// GEOHASH key [member ...]: the standard 11-character geohash of each
// member's position (latitude range -90..90), the last character always '0'.
func cmdGeohash(c *Ctx, argv [][]byte) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	z, ok := geoScores(c, argv[1])
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		var score float64
		found := false
		if z != nil {
			score, found = z.find(m)
		}
		if !found {
			c.Null()
			continue
		}
		lon, lat := geohashDecodeWGS84(uint64(score))
		bits, _ := geohashEncode(-180, 180, -90, 90, lon, lat, geoStepMax)
		var buf [11]byte
		for i := 0; i < 11; i++ {
			idx := 0
			if i < 10 {
				idx = int(bits>>(52-(uint(i)+1)*5)) & 0x1f
			}
			buf[i] = alphabet[idx]
		}
		c.Bulk(buf[:])
	}
}
