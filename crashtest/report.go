package crashtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Row is one crash.
type Row struct {
	N         int       `json:"n"`
	Scenario  string    `json:"scenario"`
	Fsync     string    `json:"fsync"`
	Sent      int       `json:"sent"`
	Acked     int       `json:"acked"`
	AckedLost int       `json:"acked_lost"`
	Seen      int       `json:"reader_seen"` // values readers were shown
	SeenLost  int       `json:"reader_seen_lost"`
	Verdict   string    `json:"verdict"` // PASS, FAIL or SKIP
	Detail    string    `json:"detail,omitempty"`
	Seconds   float64   `json:"seconds"`
	Dir       string    `json:"dir,omitempty"`
	Clients   []Verdict `json:"failed_clients,omitempty"`
}

func (r Row) skip(why string) Row {
	r.Verdict, r.Detail, r.Dir = "SKIP", why, ""
	return r
}

func (r Row) fail(why string) Row {
	r.Verdict = "FAIL"
	if r.Detail != "" {
		why = r.Detail + "; " + why
	}
	r.Detail = why
	return r
}

const rowFormat = "%3s  %-34s %-8s %7s %7s %6s %6s  %-7s %s"

func tableHeader() string {
	return fmt.Sprintf(rowFormat, "n", "scenario", "fsync", "sent", "acked", "acked", "seen", "verdict", "detail") + "\n" +
		fmt.Sprintf(rowFormat, "", "", "", "", "", "lost", "lost", "", "")
}

func (r Row) line() string {
	d := r.Detail
	if len(d) > 300 {
		d = d[:300] + "..."
	}
	if r.Verdict == "SKIP" {
		return fmt.Sprintf(rowFormat, strconv.Itoa(r.N), r.Scenario, r.Fsync, "-", "-", "-", "-", r.Verdict, d)
	}
	return fmt.Sprintf(rowFormat, strconv.Itoa(r.N), r.Scenario, r.Fsync, strconv.Itoa(r.Sent), strconv.Itoa(r.Acked),
		strconv.Itoa(r.AckedLost), strconv.Itoa(r.SeenLost), r.Verdict, d)
}

// Summary is one scenario's rows together.
type Summary struct {
	Scenario  string `json:"scenario"`
	Rows      int    `json:"rows"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	Sent      int    `json:"sent"`
	Acked     int    `json:"acked"`
	AckedLost int    `json:"acked_lost"`
	SeenLost  int    `json:"reader_seen_lost"`
}

// Report is the whole run, as printed and as written to --json.
type Report struct {
	Command []string  `json:"command"`
	Fsync   string    `json:"fsync"`
	Quick   bool      `json:"quick"`
	Seed    int64     `json:"seed"`
	Margin  string    `json:"everysec_margin"`
	Strict  bool      `json:"strict"`
	Workdir string    `json:"workdir,omitempty"`
	Rows    []Row     `json:"rows"`
	Summary []Summary `json:"summary"`
	Passed  int       `json:"passed"`
	Failed  int       `json:"failed"`
	Skipped int       `json:"skipped"`
}

func (rep *Report) finish() {
	by := map[string]*Summary{}
	var order []string
	rep.Passed, rep.Failed, rep.Skipped = 0, 0, 0
	for _, r := range rep.Rows {
		s := by[r.Scenario]
		if s == nil {
			s = &Summary{Scenario: r.Scenario}
			by[r.Scenario] = s
			order = append(order, r.Scenario)
		}
		s.Rows++
		switch r.Verdict {
		case "PASS":
			s.Passed++
			rep.Passed++
		case "SKIP":
			s.Skipped++
			rep.Skipped++
		default:
			s.Failed++
			rep.Failed++
		}
		s.Sent += r.Sent
		s.Acked += r.Acked
		s.AckedLost += r.AckedLost
		s.SeenLost += r.SeenLost
	}
	rep.Summary = rep.Summary[:0]
	for _, name := range order {
		rep.Summary = append(rep.Summary, *by[name])
	}
}

// Final is the last line: "N passed, M failed", and ", K skipped" if any.
func (rep *Report) Final() string {
	s := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
	if rep.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", rep.Skipped)
	}
	return s
}

// WriteSummary prints the summary table and the final line.
func (rep *Report) WriteSummary(w io.Writer) {
	const f = "%-34s %4s %6s %6s %7s %8s %8s %6s %6s\n"
	fmt.Fprintf(w, "\nsummary (fsync %s):\n", rep.Fsync)
	fmt.Fprintf(w, f, "scenario", "rows", "passed", "failed", "skipped", "sent", "acked", "acked", "seen")
	fmt.Fprintf(w, f, "", "", "", "", "", "", "", "lost", "lost")
	for _, s := range rep.Summary {
		fmt.Fprintf(w, f, s.Scenario, strconv.Itoa(s.Rows), strconv.Itoa(s.Passed), strconv.Itoa(s.Failed),
			strconv.Itoa(s.Skipped), strconv.Itoa(s.Sent), strconv.Itoa(s.Acked), strconv.Itoa(s.AckedLost),
			strconv.Itoa(s.SeenLost))
	}
	if rep.Workdir != "" {
		fmt.Fprintf(w, "work folder (server logs, data of failed rows): %s\n", rep.Workdir)
	}
	fmt.Fprintln(w, rep.Final())
}

// WriteJSON writes the report to a file.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
