package shard

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// Geo commands (Redis 7.0 geo.c, geohash.c, geohash_helper.c). A geo set is a
// sorted set whose scores are 52-bit interleaved geohashes, so GEOADD is a
// ZADD of encoded scores, logged as that ZADD, as Redis propagates it.
// The searches (GEORADIUS, GEORADIUSBYMEMBER, their _RO forms, GEOSEARCH,
// GEOSEARCHSTORE) scan the score ranges of the same nine geohash cells as
// Redis, in its order, so COUNT ... ANY stops at the same members.

var geoCommands = []Command{
	{Name: "geoadd", Run: cmdGeoadd},
	{Name: "geopos", Run: cmdGeopos},
	{Name: "geodist", Run: cmdGeodist},
	{Name: "geohash", Run: cmdGeohash},
	{Name: "georadius", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 1, geoRadiusCoords) }},
	{Name: "georadius_ro", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 1, geoRadiusCoords|geoNoStore) }},
	{Name: "georadiusbymember", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 1, geoRadiusMember) }},
	{Name: "georadiusbymember_ro", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 1, geoRadiusMember|geoNoStore) }},
	{Name: "geosearch", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 1, geoSearchCmd) }},
	{Name: "geosearchstore", Run: func(c *Ctx, argv [][]byte) { geoSearch(c, argv, 2, geoSearchCmd|geoSearchStore) }},
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
	a := geohashDecodeArea(geoHashBits{bits, geoStepMax})
	longitude = math.Min(math.Max((a.lonMin+a.lonMax)/2, geoLongMin), geoLongMax)
	latitude = math.Min(math.Max((a.latMin+a.latMax)/2, geoLatMin), geoLatMax)
	return longitude, latitude
}

// degRad and radDeg use Redis's D_R. Go's math.Cos and math.Sin may be one
// ulp away from glibc's, so a distance can differ from Redis's in its last
// bit: STOREDIST scores may show it in their 17th digit; the replied
// distances (4 decimals) do not.
const geoDR = math.Pi / 180.0

func degRad(ang float64) float64 { return ang * geoDR }

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

// geoFind returns a member's score; a nil z (missing key) has none.
func geoFind(z *zset, m []byte) (float64, bool) {
	if z == nil {
		return 0, false
	}
	return z.find(m)
}

// GEOPOS key [member ...]
func cmdGeopos(c *Ctx, argv [][]byte) {
	z, ok := geoScores(c, argv[1])
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		score, found := geoFind(z, m)
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
		score, found := geoFind(z, m)
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

// ---- searches (geo.c georadiusGeneric, geohash_helper.c)

// Flags of geoSearch (Redis's RADIUS_* and GEOSEARCH*).
const (
	geoRadiusCoords = 1 << iota
	geoRadiusMember
	geoNoStore
	geoSearchCmd
	geoSearchStore
)

const mercatorMax = 20037726.37

// geoShape is the area searched: a circle (radius) or a box (width,
// height), in units of conversion meters, around (lon, lat).
type geoShape struct {
	box                   bool
	lon, lat              float64
	conversion            float64
	radius, width, height float64
	bounds                [4]float64 // min lon, min lat, max lon, max lat
}

// geoHashBits is a geohash of step bits per coordinate.
type geoHashBits struct {
	bits uint64
	step uint
}

func (h geoHashBits) zero() bool { return h.bits == 0 && h.step == 0 }

func radDeg(ang float64) float64 { return ang / geoDR }

// boundingBox is geohashBoundingBox.
func (sh *geoShape) boundingBox() {
	height, width := sh.radius, sh.radius
	if sh.box {
		height, width = sh.height/2, sh.width/2
	}
	height *= sh.conversion
	width *= sh.conversion
	latDelta := radDeg(height / earthRadiusInMeters)
	longDeltaTop := radDeg(width / earthRadiusInMeters / math.Cos(degRad(sh.lat+latDelta)))
	longDeltaBottom := radDeg(width / earthRadiusInMeters / math.Cos(degRad(sh.lat-latDelta)))
	if sh.lat < 0 {
		sh.bounds[0] = sh.lon - longDeltaBottom
		sh.bounds[2] = sh.lon + longDeltaBottom
	} else {
		sh.bounds[0] = sh.lon - longDeltaTop
		sh.bounds[2] = sh.lon + longDeltaTop
	}
	sh.bounds[1] = sh.lat - latDelta
	sh.bounds[3] = sh.lat + latDelta
}

// geohashEstimateStepsByRadius is Redis's.
func geohashEstimateStepsByRadius(rangeMeters, lat float64) uint {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint(min(max(step, 1), 26))
}

func geohashMoveX(h geoHashBits, d int) geoHashBits { return geohashMove(h, d, 0xaaaaaaaaaaaaaaaa) }
func geohashMoveY(h geoHashBits, d int) geoHashBits { return geohashMove(h, d, 0x5555555555555555) }

// geohashMove steps the cell one cell along the axis whose bits axis
// masks (longitude: the odd bits, latitude: the even ones), as Redis's
// geohash_move_x/y: the axis's bits are incremented or decremented as one
// number, carrying through the other axis's bits.
func geohashMove(h geoHashBits, d int, axis uint64) geoHashBits {
	a := h.bits & axis
	o := h.bits &^ axis
	zz := ^axis >> (64 - h.step*2)
	if d > 0 {
		a = a + (zz + 1)
	} else {
		a = a | zz
		a = a - (zz + 1)
	}
	a &= axis >> (64 - h.step*2)
	h.bits = a | o
	return h
}

// geoArea is a decoded cell.
type geoArea struct{ lonMin, lonMax, latMin, latMax float64 }

func geohashDecodeArea(h geoHashBits) geoArea {
	ilato, ilono := squash64(h.bits), squash64(h.bits>>1)
	scale := float64(uint64(1) << h.step)
	latScale, longScale := geoLatMax-geoLatMin, geoLongMax-geoLongMin
	return geoArea{
		latMin: geoLatMin + (float64(ilato)*1.0/scale)*latScale,
		latMax: geoLatMin + ((float64(ilato)+1)*1.0/scale)*latScale,
		lonMin: geoLongMin + (float64(ilono)*1.0/scale)*longScale,
		lonMax: geoLongMin + ((float64(ilono)+1)*1.0/scale)*longScale,
	}
}

// geoCells returns the cell of the centre and its eight neighbours in
// Redis's search order (centre, N, S, E, W, NE, NW, SE, SW), the useless
// ones zeroed (geohashCalculateAreasByShapeWGS84).
func (sh *geoShape) cells() [9]geoHashBits {
	sh.boundingBox()
	minLon, minLat, maxLon, maxLat := sh.bounds[0], sh.bounds[1], sh.bounds[2], sh.bounds[3]
	radius := sh.radius
	if sh.box {
		radius = math.Sqrt((sh.width/2)*(sh.width/2) + (sh.height/2)*(sh.height/2))
	}
	radius *= sh.conversion
	steps := geohashEstimateStepsByRadius(radius, sh.lat)
	encode := func(steps uint) (geoHashBits, [9]geoHashBits) {
		b, _ := geohashEncode(geoLongMin, geoLongMax, geoLatMin, geoLatMax, sh.lon, sh.lat, steps)
		h := geoHashBits{b, steps}
		return h, [9]geoHashBits{
			h,
			geohashMoveY(h, 1),                    // north
			geohashMoveY(h, -1),                   // south
			geohashMoveX(h, 1),                    // east
			geohashMoveX(h, -1),                   // west
			geohashMoveY(geohashMoveX(h, 1), 1),   // north east
			geohashMoveY(geohashMoveX(h, -1), 1),  // north west
			geohashMoveY(geohashMoveX(h, 1), -1),  // south east
			geohashMoveY(geohashMoveX(h, -1), -1), // south west
		}
	}
	h, n := encode(steps)
	north, south := geohashDecodeArea(n[1]), geohashDecodeArea(n[2])
	east, west := geohashDecodeArea(n[3]), geohashDecodeArea(n[4])
	decrease := north.latMax < maxLat || south.latMin > minLat || east.lonMax < maxLon || west.lonMin > minLon
	if steps > 1 && decrease {
		steps--
		h, n = encode(steps)
	}
	area := geohashDecodeArea(h)
	if steps >= 2 {
		if area.latMin < minLat {
			n[2], n[8], n[7] = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.latMax > maxLat {
			n[1], n[5], n[6] = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.lonMin < minLon {
			n[4], n[8], n[6] = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.lonMax > maxLon {
			n[3], n[7], n[5] = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
	}
	return n
}

// geoPoint is a search result.
type geoPoint struct {
	lon, lat, dist, score float64
	ref                   int32  // the member in the sorted set (zset.memberAt)
	member                []byte // set for the points replied or stored
}

// within reports whether a member's decoded position is in the shape, and
// its distance from the centre in meters (geoAppendIfWithinShape).
func (sh *geoShape) within(lon, lat float64) (float64, bool) {
	if !sh.box {
		d := geohashGetDistance(sh.lon, sh.lat, lon, lat)
		return d, d <= sh.radius*sh.conversion
	}
	if earthRadiusInMeters*math.Abs(degRad(sh.lat)-degRad(lat)) > sh.height*sh.conversion/2 {
		return 0, false
	}
	if geohashGetDistance(lon, lat, sh.lon, lat) > sh.width*sh.conversion/2 {
		return 0, false
	}
	return geohashGetDistance(sh.lon, sh.lat, lon, lat), true
}

// search collects the members in the shape, cell by cell, stopping at
// limit results when limit > 0 (membersOfAllNeighbors).
func (sh *geoShape) search(z *zset, limit int) []geoPoint {
	var out []geoPoint
	cells := sh.cells()
	last := -1
	for i, h := range cells {
		if h.zero() {
			continue
		}
		if last >= 0 && h == cells[last] {
			continue // huge radii: adjacent cells may be the same
		}
		if limit > 0 && len(out) >= limit {
			break
		}
		lo := float64(h.bits << (52 - h.step*2))
		hi := float64((h.bits + 1) << (52 - h.step*2))
		first := z.search(func(s float64, _ []byte) bool { return s >= lo })
		end := z.search(func(s float64, _ []byte) bool { return s >= hi })
		if first < end {
			it := z.iter(first, false)
			for j := first; j < end; j++ {
				ref, score := it.nextRef()
				lon, lat := geohashDecodeWGS84(uint64(score))
				if d, ok := sh.within(lon, lat); ok {
					out = append(out, geoPoint{lon: lon, lat: lat, dist: d, score: score, ref: ref})
				}
				if limit > 0 && len(out) >= limit {
					break
				}
			}
		}
		last = i
	}
	return out
}

// geoDistanceArg parses a radius or box side with its unit
// (extractDistanceOrReply / extractBoxOrReply).
func geoDistanceArg(c *Ctx, b []byte, msg string) (float64, bool) {
	v, ok := parseScore(b)
	if !ok {
		c.Err("ERR " + msg)
		return 0, false
	}
	return v, true
}

func geoLonLatArg(c *Ctx, lonb, latb []byte) (float64, float64, bool) {
	lon, ok1 := parseScore(lonb)
	lat, ok2 := parseScore(latb)
	if !ok1 || !ok2 {
		c.Err(ErrNotFloat)
		return 0, 0, false
	}
	if lon < geoLongMin || lon > geoLongMax || lat < geoLatMin || lat > geoLatMax {
		c.Err("ERR invalid longitude,latitude pair " + strconv.FormatFloat(lon, 'f', 6, 64) + "," + strconv.FormatFloat(lat, 'f', 6, 64))
		return 0, 0, false
	}
	return lon, lat, true
}

func geoMemberPos(c *Ctx, z *zset, m []byte) (float64, float64, bool) {
	score, ok := z.find(m)
	if !ok {
		c.Err("ERR could not decode requested zset member")
		return 0, 0, false
	}
	lon, lat := geohashDecodeWGS84(uint64(score))
	return lon, lat, true
}

// geoSearch is georadiusGeneric: GEORADIUS[_RO] key lon lat radius unit,
// GEORADIUSBYMEMBER[_RO] key member radius unit, GEOSEARCH key and
// GEOSEARCHSTORE dst key, then the options.
func geoSearch(c *Ctx, argv [][]byte, srcIdx int, flags int) {
	key := argv[srcIdx]
	_, z, ok := zsetAt(c, c.DBOf(key), key, false)
	if !ok {
		return
	}
	var sh geoShape
	var storeKey []byte
	storeDist := false
	var baseArgs int
	radiusArg := func(i int) bool {
		r, ok := geoDistanceArg(c, argv[i], "need numeric radius")
		if !ok {
			return false
		}
		if r < 0 {
			c.Err("ERR radius cannot be negative")
			return false
		}
		f, ok := geoUnitFactor(c, argv[i+1])
		if !ok {
			return false
		}
		sh.radius, sh.conversion, sh.box = r, f, false
		return true
	}
	switch {
	case flags&geoRadiusCoords != 0:
		baseArgs = 6
		var ok bool
		if sh.lon, sh.lat, ok = geoLonLatArg(c, argv[2], argv[3]); !ok {
			return
		}
		if !radiusArg(4) {
			return
		}
	case flags&geoRadiusMember != 0:
		baseArgs = 5
		if z != nil {
			var ok bool
			if sh.lon, sh.lat, ok = geoMemberPos(c, z, argv[2]); !ok {
				return
			}
			if !radiusArg(3) {
				return
			}
		}
	default:
		baseArgs = 2
		if flags&geoSearchStore != 0 {
			baseArgs = 3
			storeKey = argv[1]
		}
	}

	withDist, withHash, withCoord := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sortDir := 0 // 0 none, 1 asc, -1 desc
	any := false
	var count int64
	search := flags&geoSearchCmd != 0
	for i := baseArgs; i < len(argv); i++ {
		remaining := len(argv) - i - 1 // arguments after this one
		arg := argv[i]
		switch {
		case EqualFold(arg, "withdist"):
			withDist = true
		case EqualFold(arg, "withhash"):
			withHash = true
		case EqualFold(arg, "withcoord"):
			withCoord = true
		case EqualFold(arg, "any"):
			any = true
		case EqualFold(arg, "asc"):
			sortDir = 1
		case EqualFold(arg, "desc"):
			sortDir = -1
		case EqualFold(arg, "count") && remaining >= 1:
			n, ok := ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if n <= 0 {
				c.Err("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case (EqualFold(arg, "store") || EqualFold(arg, "storedist")) && remaining >= 1 && flags&geoNoStore == 0 && !search:
			storeKey = argv[i+1]
			storeDist = EqualFold(arg, "storedist")
			i++
		case EqualFold(arg, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case EqualFold(arg, "frommember") && remaining >= 1 && search && !fromLoc:
			if z != nil {
				var ok bool
				if sh.lon, sh.lat, ok = geoMemberPos(c, z, argv[i+1]); !ok {
					return
				}
			}
			fromMember = true
			i++
		case EqualFold(arg, "fromlonlat") && remaining >= 2 && search && !fromMember:
			var ok bool
			if sh.lon, sh.lat, ok = geoLonLatArg(c, argv[i+1], argv[i+2]); !ok {
				return
			}
			fromLoc = true
			i += 2
		case EqualFold(arg, "byradius") && remaining >= 2 && search && !byBox:
			if !radiusArg(i + 1) {
				return
			}
			byRadius = true
			i += 2
		case EqualFold(arg, "bybox") && remaining >= 3 && search && !byRadius:
			w, ok := geoDistanceArg(c, argv[i+1], "need numeric width")
			if !ok {
				return
			}
			h, ok := geoDistanceArg(c, argv[i+2], "need numeric height")
			if !ok {
				return
			}
			if h < 0 || w < 0 {
				c.Err("ERR height or width cannot be negative")
				return
			}
			f, ok := geoUnitFactor(c, argv[i+3])
			if !ok {
				return
			}
			sh.width, sh.height, sh.conversion, sh.box = w, h, f, true
			byBox = true
			i += 3
		default:
			c.Err(ErrSyntax)
			return
		}
	}

	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.Err("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if search && !(fromMember || fromLoc) {
		c.Err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(argv[0]))
		return
	}
	if search && !(byRadius || byBox) {
		c.Err("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(argv[0]))
		return
	}
	if any && count == 0 {
		c.Err("ERR the ANY argument requires COUNT argument")
		return
	}

	if z == nil {
		if storeKey != nil {
			db := c.DBOf(storeKey)
			if db.DeleteKey(storeKey) {
				db.Notify(NotifyGeneric, "del", storeKey)
				c.Dirty(1)
			}
			c.Int(0)
		} else {
			c.Array(0)
		}
		return
	}
	if count != 0 && sortDir == 0 && !any {
		sortDir = 1
	}
	limit := 0
	if any {
		limit = int(min(count, math.MaxInt32))
	}
	points := sh.search(z, limit)
	if len(points) == 0 && storeKey == nil {
		c.Array(0)
		return
	}
	if sortDir != 0 {
		slices.SortStableFunc(points, func(a, b geoPoint) int {
			if sortDir < 0 {
				a, b = b, a
			}
			return cmp.Compare(a.dist, b.dist)
		})
	}
	n := len(points)
	if count != 0 && int64(n) > count {
		n = int(count)
	}
	points = points[:n]
	for i := range points {
		points[i].member = z.memberAt(points[i].ref) // z is unchanged since search
	}

	if storeKey == nil {
		opts := 0
		for _, on := range []bool{withDist, withHash, withCoord} {
			if on {
				opts++
			}
		}
		c.Array(n)
		for _, p := range points {
			if opts > 0 {
				c.Array(opts + 1)
			}
			c.Bulk(p.member)
			if withDist {
				c.BulkStr(strconv.FormatFloat(p.dist/sh.conversion, 'f', 4, 64))
			}
			if withHash {
				c.Int(int64(p.score))
			}
			if withCoord {
				c.Array(2)
				geoReplyCoord(c, p.lon)
				geoReplyCoord(c, p.lat)
			}
		}
		return
	}

	db := c.DBOf(storeKey)
	if n == 0 {
		if db.DeleteKey(storeKey) {
			db.Notify(NotifyGeneric, "del", storeKey)
			c.Dirty(1)
		}
		c.Int(0)
		return
	}
	members := make([][]byte, n)
	scores := make([]float64, n)
	for i, p := range points {
		members[i] = p.member
		scores[i] = p.score
		if storeDist {
			scores[i] = p.dist / sh.conversion
		}
	}
	sortByScore(members, scores)
	nz := newZsetSorted(db.sh.Cfg, members, scores)
	db.SetObj(storeKey, TypeZSet, nz.encoding(), nz)
	event := "georadiusstore"
	if search {
		event = "geosearchstore"
	}
	db.Notify(NotifyZSet, event, storeKey)
	c.Dirty(n)
	c.Int(int64(n))
}
