package tests

import (
	"fmt"
	"math"
	"strings"
)

// A small line chart in SVG, for the pictures some long runs leave in
// bench/results (REDSHARD_*_OUT): x in seconds, one polyline per series,
// optional horizontal reference lines (a limit, a threshold).

type chartSeries struct {
	name   string
	x, y   []float64
	dashed bool
}

type chartLine struct {
	name string
	y    float64
}

var chartColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// lineChartSVG draws series against x; yFmt formats the y axis' ticks.
func lineChartSVG(title, xLabel string, series []chartSeries, lines []chartLine, yFmt func(float64) string) string {
	const width, height = 760, 380
	const left, right, top, bottom = 80, 190, 36, 46
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	xmax, ymax := 0.0, 0.0
	for _, s := range series {
		for i := range s.x {
			xmax = math.Max(xmax, s.x[i])
			ymax = math.Max(ymax, s.y[i])
		}
	}
	for _, l := range lines {
		ymax = math.Max(ymax, l.y)
	}
	if xmax == 0 {
		xmax = 1
	}
	if ymax == 0 {
		ymax = 1
	}
	ymax = niceCeil(ymax * 1.05)
	px := func(x float64) float64 { return left + x/xmax*pw }
	py := func(y float64) float64 { return top + ph - y/ymax*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", left, xmlEscape(title))
	for i := 0; i <= 5; i++ {
		y := ymax * float64(i) / 5
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+pw, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, xmlEscape(yFmt(y)))
	}
	for i := 0; i <= 6; i++ {
		x := xmax * float64(i) / 6
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.0f</text>`+"\n", px(x), height-bottom+16, x)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+pw/2, height-10, xmlEscape(xLabel))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	legend := 0
	legendAt := func(name, color, dash string) {
		y := top + 10 + legend*18
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", left+pw+12, left+pw+32, y, y, color, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", left+pw+38, y+4, xmlEscape(name))
		legend++
	}
	for i, l := range lines {
		color := "#555"
		if i == 0 {
			color = "#000"
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", left, left+pw, py(l.y), py(l.y), color)
		legendAt(l.name, color, ` stroke-dasharray="6 4"`)
	}
	for i, s := range series {
		color := chartColors[i%len(chartColors)]
		var pts []string
		for j := range s.x {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.x[j]), py(s.y[j])))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="2 3"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
		legendAt(s.name, color, dash)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func mib(v float64) string { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }
