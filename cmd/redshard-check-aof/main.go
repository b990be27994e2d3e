// Command redshard-check-aof checks, and with --fix repairs, an append-only
// file folder written by redshard or by redis-server 7 (RESP format): the
// manifest, every listed file, every group checksum.
//
//	redshard-check-aof [--fix] <file.manifest|file.aof>
//
// It exits 0 when the files are valid (or were fixed) and 1 otherwise, like
// redis-check-aof. --fix cuts a damaged tail of the last file back to its
// last whole record; bytes that hold whole records after the damage are saved
// beside the file first.
package main

import (
	"fmt"
	"os"

	"github.com/redshard/redshard/aof"
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	var path string
	fix := false
	switch {
	case len(args) == 2 && args[1] != "--fix":
		path = args[1]
	case len(args) == 3 && args[1] == "--fix":
		path, fix = args[2], true
	default:
		name := "redshard-check-aof"
		if len(args) > 0 {
			name = args[0]
		}
		fmt.Printf("Usage: %s [--fix] <file.manifest|file.aof>\n", name)
		return 1
	}
	ok, err := aof.Check(path, fix, os.Stdout)
	if err != nil || !ok {
		return 1
	}
	return 0
}
