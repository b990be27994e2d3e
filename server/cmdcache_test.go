package server

import "testing"

// TestCommandCache: the loop's cache of the last command name returns what
// the table does — whatever the spelling, and for a command with
// subcommands the subcommand that the next argument names (CONFIG GET then
// CONFIG SET must not run CONFIG GET twice).
func TestCommandCache(t *testing.T) {
	srv := admServer(t, 1)
	cl := admClient(srv, 0, 50000)
	seq := [][]string{
		{"GET", "k"}, {"GET", "k"}, {"get", "k"}, {"SET", "k", "v"},
		{"CONFIG", "GET", "appendfsync"}, {"CONFIG", "SET", "appendfsync", "always"},
		{"CONFIG", "GET", "x"}, {"config", "resetstat"},
		{"CLIENT", "ID"}, {"CLIENT", "INFO"}, {"INCR", "n"}, {"NOSUCHCOMMAND"}, {"INCR", "n"},
	}
	for i, s := range seq {
		argv := argvOf(s...)
		want := srv.lookup(argv)
		if got := cl.lookup(argv); got != want {
			t.Fatalf("step %d %q: cached lookup gave %v, the table %v", i, s, got, want)
		}
	}
}
