// Package acl holds Redis 7.0's access control lists: users, the rules that
// shape them (ACL SETUSER's modifiers and selectors), their description back
// as rules (ACL LIST, GETUSER), the permission check for a command line, the
// ACL LOG, password hashing and generation, and the aclfile format.
//
// It knows commands only through the Table the server hands it (names,
// subcommands, categories); it never imports server and never touches a
// connection. Key and channel positions of a command line are found by the
// caller and passed in as KeyRef and ChannelRef.
//
// Concurrency: a User is a stable identity whose rules are an immutable
// *Rules behind an atomic pointer. The data path loads the pointer and reads;
// ACL SETUSER builds a new Rules under the Registry's mutex and swaps it in.
// Nothing a reader holds is ever written again.
package acl
