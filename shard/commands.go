package shard

// Commands is the data command table: one row per command, each type's rows
// kept beside its handlers (stringCommands in string.go, and so on).
var Commands = concatCommands(
	stringCommands,
	keyCommands,
	memoryCommands,
	bitmapCommands,
	hllCommands,
	listCommands,
	setCommands,
	hashCommands,
	zsetCommands,
	geoCommands,
	streamCommands,
	sortCommands,
	zsetBlockingCommands,
	dumpCommands,
)

func concatCommands(tables ...[]Command) []Command {
	var all []Command
	for _, t := range tables {
		all = append(all, t...)
	}
	return all
}
