package lua

import glua "github.com/yuin/gopher-lua"

func (e *Engine) openStruct() *glua.LTable   { return e.L.CreateTable(0, 0) }
