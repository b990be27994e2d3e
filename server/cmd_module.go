package server

// MODULE: redshard loads no Redis modules (they are shared objects built
// against Redis's C API). The command answers as a Redis with none loaded
// does: LIST is empty, UNLOAD finds no such module, and LOAD and LOADEX
// fail as a failed load does in Redis, with the reason in the log. They are
// protected commands, allowed by enable-module-command as in Redis.

import (
	"strings"
)

var moduleCommands = []serverCmd{
	{name: "module|help", exec: cmdModuleHelp, home: true},
	{name: "module|list", exec: cmdModuleList, home: true},
	{name: "module|load", exec: cmdModuleLoad, home: true},
	{name: "module|loadex", exec: cmdModuleLoad, home: true},
	{name: "module|unload", exec: cmdModuleUnload, home: true},
}

const errModuleNotAllowed = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

func cmdModuleHelp(x *Exec, argv [][]byte) {
	addHelp(x, argv[0], []string{
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
	})
}

func cmdModuleList(x *Exec, _ [][]byte) { x.Array(0) }

// moduleAllowed is Redis's check of a protected command, made before the
// command runs: a refusal counts as rejected, not failed.
func moduleAllowed(x *Exec, sub string) bool {
	if x.srv.cfg.ModuleCommandAllowed(isLocalClient(x.cl)) {
		return true
	}
	x.countRejected(x.srv.lookupCommandName("module|" + sub))
	x.Err(errModuleNotAllowed)
	return false
}

func cmdModuleLoad(x *Exec, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	if !moduleAllowed(x, sub) {
		return
	}
	x.srv.log.Warningf("Module %s failed to load: redshard does not load Redis modules", argv[2])
	x.Err("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(x *Exec, argv [][]byte) {
	if !moduleAllowed(x, "unload") {
		return
	}
	x.Err("ERR Error unloading module: no such module with that name")
}
