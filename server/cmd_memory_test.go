package server

import (
	"strings"
	"testing"
)

// MEMORY DOCTOR's report follows Redis's getMemoryDoctorReport thresholds
// and texts (object.c), every text ending in a newline.
func TestMemoryDoctorReport(t *testing.T) {
	const mb = 1 << 20
	healthy := memInfo{used: 100 * mb, rss: 110 * mb, allocated: 100 * mb, active: 101 * mb, resident: 105 * mb}
	for _, tc := range []struct {
		name            string
		m               memInfo
		peak, cmem, ncl int64
		want            []string // substrings, in order
	}{
		{"empty", memInfo{used: 4 * mb, rss: 40 * mb}, 4 * mb, 0, 1,
			[]string{"Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"}},
		{"healthy", healthy, 100 * mb, 0, 1,
			[]string{"Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"}},
		{"peak and clients", healthy, 200 * mb, 3 * mb, 10,
			[]string{"Sam, I detected a few issues in this Redis instance memory implants:\n\n",
				" * Peak memory: In the past this instance used more than 150% ",
				" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average).",
				"I'm here to keep you safe, Sam. I want to help you.\n"}},
		{"rss", memInfo{used: 100 * mb, rss: 200 * mb, allocated: 100 * mb, active: 101 * mb, resident: 190 * mb}, 100 * mb, 0, 1,
			[]string{" * High total RSS: ", `Note: The currently used allocator is "go".`, " * High allocator RSS overhead: "}},
	} {
		got := memoryDoctorReport(tc.m, tc.peak, tc.cmem, tc.ncl)
		rest := got
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: report lacks %q (in order):\n%s", tc.name, w, got)
				break
			}
			rest = rest[i+len(w):]
		}
		if !strings.HasSuffix(got, "\n") {
			t.Errorf("%s: report does not end in a newline: %q", tc.name, got)
		}
	}
}
