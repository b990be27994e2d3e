// Package crashfs simulates power loss under a real program, without strace
// and without a virtual machine: a FUSE file system (go-fuse v2) that passes
// every request through to a real folder, the backing folder, and keeps
// beside it what a disk would not have kept yet. PowerCut unmounts, reverts
// the backing folder to what the disk would hold after the power came back,
// and mounts again, so the program restarts on it. It is the technique of
// LazyFS, with POSIX's strict rules for directories.
//
// crashfs owns the mount and the backing folder while mounted: nothing else
// may change the backing folder then. It imports no other redshard package.
//
// # The live view
//
// Every write, truncate, create, rename and unlink is done on the backing
// folder at once, so the mount always shows exactly the backing folder
// (minus the graveyard, below), and reads cost nothing extra. What is kept
// is the undo: enough to put back what the disk held at the last sync.
// Writeback caching and passthrough are off and the kernel's entry and
// attribute caches have a zero timeout, so every write reaches crashfs
// before the writer's system call returns, and a new mount after a cut
// sees only the backing folder.
//
// # What is durable
//
// File data. Per file (per inode: hard links share it), crashfs keeps a
// record: the durable size (the size at the last FSYNC of the file, with or
// without datasync, through any open descriptor), the durable bytes of
// every range below the durable size overwritten since (read from the file
// before the first overwrite of that range: a later overwrite of the same
// range saves nothing more), and a copy of the first write since the last
// sync that reached past the durable size (at most one FUSE write, 128 KiB,
// per file). A file with no record holds only durable data. FSYNC makes
// the file's whole present content durable and empties its record, and so
// does every write through a descriptor opened O_SYNC or O_DSYNC; close,
// flush, sync(2) and syncfs(2) make nothing durable. Truncation below the
// durable size, O_TRUNC opens, fallocate's punch-hole, zero-range,
// collapse-range and insert-range save the durable bytes they change first,
// as a write does. copy_file_range is refused with ENOSYS, so the kernel
// copies by writes; ioctls on files (FICLONE ...) and O_TMPFILE are refused.
// An append-only log therefore costs one lock and one pwrite per write and
// one fstat per fsync: nothing is copied for an append but its first write
// after each sync. The backing folder itself is never fsynced: the disk
// simulated is the record, not the real one.
//
// Names. Every namespace operation (create, mknod, mkdir, symlink, link,
// unlink, rmdir, rename, rename with RENAME_EXCHANGE or RENAME_NOREPLACE)
// goes into one ordered log of operations that are not yet durable. An
// operation in one directory becomes durable when that directory is
// fsynced (FSYNCDIR) after it. A rename across two directories becomes
// durable when both have been fsynced after it: a program that fsyncs only
// one relies on journaling that POSIX does not promise, and crashfs
// catches it. An fsync of a file never makes its name durable: a file
// created, written and fsynced whose directory was never fsynced disappears
// on a cut, as in LazyFS. When an operation becomes durable, so does every
// earlier pending operation on one of the same directory entries (a name in
// a directory), because the later one was built on it: a journal cannot
// commit a name's second change without its first. Creating a directory
// and fsyncing only the new directory leaves the directory itself pending:
// a cut removes it with everything in it.
//
// A removed name must come back if its removal is undone, so crashfs never
// deletes on unlink, rmdir or a rename over an existing entry: it moves the
// victim into the graveyard, a folder named GraveyardName at the top of the
// backing folder that the mount hides, and deletes it for real once the
// removal is durable (or at a clean Unmount).
//
// # What a cut keeps
//
// PowerCut marks the mount dead (every later request through it fails with
// EIO, so a writer still alive cannot add to the disk after the cut),
// unmounts it (lazily if the kernel still holds it busy), then
//
//  1. undoes every pending namespace operation, newest first: a created
//     name is removed (a created directory with its whole subtree), a removed
//     name comes back from the graveyard, a rename goes back and gives the
//     overwritten entry its name again. An operation whose directory has
//     since been removed for good is skipped: its entries are lost with it.
//  2. empties the graveyard.
//  3. reverts every file still named: it is cut to its durable size and the
//     saved durable ranges are written back. With Cut.Torn, the first write
//     past the durable size is torn: a prefix of k bytes of its part beyond
//     the durable size is kept, k uniform in [0, length) from Cut.Rand (math/
//     rand/v2), so the write is never kept whole; a gap between the durable
//     size and the write's offset reads as zeros. Only that first write is
//     torn: later unsynced writes are lost whole, as a disk that writes in
//     order would lose them.
//
// and mounts again at the same mountpoint. File mode, owner, times and
// extended attributes are not tracked: they are written through and kept.
package crashfs
