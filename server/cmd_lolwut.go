package server

// LOLWUT [VERSION v] [args]: Redis 7.0's. Without VERSION (or with one that
// is not 5 or 6) it answers "Redis ver. 7.0.15\n"; VERSION 5 draws Georg
// Nees's "Schotter" (cols, squares per row, squares per column) in Braille
// characters, VERSION 6 a city skyline (cols, rows) in terminal colours,
// both randomized as Redis's are, with Redis's defaults, limits and
// integer errors. The drawing keeps Redis's float32 arithmetic, so the
// rows without randomness (the first two rows of squares) are Redis's to
// the byte.

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/redshard/redshard/shard"
)

var lolwutCommands = []serverCmd{
	{name: "lolwut", exec: cmdLolwut, home: true},
}

func cmdLolwut(x *Exec, argv [][]byte) {
	v := RedisVersion
	args := argv
	if len(argv) >= 3 && shard.EqualFold(argv[1], "version") {
		n, ok := shard.ParseInt(argv[2])
		if !ok {
			x.Err(shard.ErrNotInt)
			return
		}
		v = strconv.FormatUint(uint64(uint32(n)), 10) + ".0.0"
		args = argv[2:] // the version implementations see argv[1:] as theirs
	}
	switch {
	case len(v) > 2 && (v[0] == '5' && v[1] == '.' && v[2] != '9' || v[0] == '4' && v[1] == '.' && v[2] == '9'):
		lolwut5(x, args)
	case len(v) > 2 && (v[0] == '6' && v[1] == '.' && v[2] != '9' || v[0] == '5' && v[1] == '.' && v[2] == '9'):
		lolwut6(x, args)
	default:
		x.Verbatim([]byte("Redis ver. " + RedisVersion + "\n"))
	}
}

// lolwutArgs reads up to len(dst) optional integers after args[0], each
// clamped to [1, hi[i]]; false (the error answered) if one is not an
// integer.
func lolwutArgs(x *Exec, args [][]byte, dst []int64, hi []int64) bool {
	for i := range dst {
		if len(args) > i+1 {
			n, ok := shard.ParseInt(args[i+1])
			if !ok {
				x.Err(shard.ErrNotInt)
				return false
			}
			dst[i] = n
		}
	}
	for i := range dst {
		dst[i] = min(max(dst[i], 1), hi[i])
	}
	return true
}

type lwCanvas struct {
	width, height int
	pixels        []byte
}

func newCanvas(w, h int, bg byte) *lwCanvas {
	c := &lwCanvas{width: w, height: h, pixels: make([]byte, w*h)}
	for i := range c.pixels {
		c.pixels[i] = bg
	}
	return c
}

func (c *lwCanvas) set(x, y int, color byte) {
	if x < 0 || x >= c.width || y < 0 || y >= c.height {
		return
	}
	c.pixels[x+y*c.width] = color
}

func (c *lwCanvas) get(x, y int) byte {
	if x < 0 || x >= c.width || y < 0 || y >= c.height {
		return 0
	}
	return c.pixels[x+y*c.width]
}

func (c *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := 1, 1
	if x1 >= x2 {
		sx = -1
	}
	if y1 >= y2 {
		sy = -1
	}
	err := dx - dy
	for {
		c.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// square draws a square of the given size (the circle it is inscribed in)
// centred on x, y and rotated by angle, with C's float and double steps.
func (c *lwCanvas) square(x, y int, size, angle float32, color byte) {
	size = float32(float64(size) / 1.4142135623)
	size = float32(math.Round(float64(size)))
	var px, py [4]int
	k := float32(math.Pi/4 + float64(angle))
	for j := 0; j < 4; j++ {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := 0; j < 4; j++ {
		c.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// crand is C's rand()/RAND_MAX as a float32 in [0, 1].
func crand() float32 { return float32(rand.Int32()) / float32(math.MaxInt32) }

func schotter(cols, perRow, perCol int) *lwCanvas {
	width := cols * 2
	padding := 0
	if width > 4 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	height := int(side*float32(perCol) + float32(padding*2))
	c := newCanvas(width, height, 0)
	for y := 0; y < perCol; y++ {
		for x := 0; x < perRow; x++ {
			sx := int(float32(x)*side + side/2 + float32(padding))
			sy := int(float32(y)*side + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r1 := crand() / float32(perCol) * float32(y)
				r2 := crand() / float32(perCol) * float32(y)
				r3 := crand() / float32(perCol) * float32(y)
				if rand.IntN(2) == 1 {
					r1 = -r1
				}
				if rand.IntN(2) == 1 {
					r2 = -r2
				}
				if rand.IntN(2) == 1 {
					r3 = -r3
				}
				angle = r1
				sx = int(float32(sx) + r2*side/3)
				sy = int(float32(sy) + r3*side/3)
			}
			c.square(sx, sy, side, angle, 1)
		}
	}
	return c
}

// braille renders 2x4 pixels per character (U+2800 + the dot bits).
func (c *lwCanvas) braille() []byte {
	var out []byte
	for y := 0; y < c.height; y += 4 {
		for x := 0; x < c.width; x += 2 {
			b := 0
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if c.get(x+p[0], y+p[1]) != 0 {
					b |= 1 << i
				}
			}
			code := 0x2800 + b
			out = append(out, byte(0xE0|code>>12), byte(0x80|(code>>6)&0x3F), byte(0x80|code&0x3F))
		}
		if y != c.height-1 {
			out = append(out, '\n')
		}
	}
	return out
}

func lolwut5(x *Exec, args [][]byte) {
	v := []int64{66, 8, 12}
	if !lolwutArgs(x, args, v, []int64{1000, 200, 200}) {
		return
	}
	out := schotter(int(v[0]), int(v[1]), int(v[2])).braille()
	out = append(out, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. "+RedisVersion+"\n"...)
	x.Verbatim(out)
}

func skyscraper(c *lwCanvas, xoff, width, height int, windows bool, color byte) {
	starty := c.height - 1
	endy := starty - height + 1
	for y := starty; y >= endy; y-- {
		for px := xoff; px < xoff+width; px++ {
			if y == endy && (px <= xoff+1 || px >= xoff+width-2) {
				continue // the roof is four pixels narrower
			}
			col := color
			if windows && px > xoff+1 && px < xoff+width-2 && y > endy+1 && y < starty-1 {
				relx, rely := px-(xoff+1), y-(endy+1)
				if relx/2%2 != 0 && rely%2 != 0 {
					for col == color {
						col = byte(1 + rand.IntN(2))
					}
					if relx%2 != 0 {
						col = c.get(px-1, y)
					}
				}
			}
			c.set(px, y, col)
		}
	}
}

func skyline(c *lwCanvas) {
	for color := byte(2); color >= 1; color-- {
		for offset := -10; offset < c.width; {
			offset += rand.IntN(8)
			width := 10 + rand.IntN(9)
			var height int
			if color == 2 {
				height = c.height/2 + rand.IntN(math.MaxInt32)%c.height/2
			} else {
				height = c.height/2 + rand.IntN(math.MaxInt32)%c.height/3
			}
			skyscraper(c, offset, width, height, false, color)
			if color == 2 {
				offset += width / 2
			} else {
				offset += width + 1
			}
		}
	}
	for offset := -10; offset < c.width; {
		offset += rand.IntN(8)
		width := 5 + rand.IntN(14)
		if width%4 != 0 {
			width += width % 3
		}
		height := c.height/3 + rand.IntN(math.MaxInt32)%c.height/2
		skyscraper(c, offset, width, height, true, 0)
		offset += width + 5
	}
}

func lolwut6(x *Exec, args [][]byte) {
	v := []int64{80, 20}
	if !lolwutArgs(x, args, v, []int64{1000, 1000}) {
		return
	}
	c := newCanvas(int(v[0]), int(v[1]), 3)
	skyline(c)
	var b strings.Builder
	for y := 0; y < c.height; y++ {
		for px := 0; px < c.width; px++ {
			ce := "0;30;40m"
			switch c.get(px, y) {
			case 1:
				ce = "0;90;100m"
			case 2:
				ce = "0;37;47m"
			case 3:
				ce = "0;97;107m"
			}
			b.WriteString("\033[" + ce + " \033[0m")
		}
		if y != c.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. " + RedisVersion + "\n")
	x.Verbatim([]byte(b.String()))
}
