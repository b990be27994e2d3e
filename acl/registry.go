package acl

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"sort"
	"sync"
	"sync/atomic"
)

// User is a user's identity: connections hold it, and read its current
// Rules with Load. The rules change by a swap of the pointer; a deleted user
// keeps its last rules until its connections are closed.
type User struct {
	Name    string
	rules   atomic.Pointer[Rules]
	deleted atomic.Bool
}

// Load returns the user's current rules.
func (u *User) Load() *Rules { return u.rules.Load() }

// Deleted reports that the user was removed (DELUSER, ACL LOAD).
func (u *User) Deleted() bool { return u.deleted.Load() }

// Registry is the set of users. Its mutex guards the map and serializes
// changes; the data path never takes it.
type Registry struct {
	mu    sync.Mutex
	env   Env
	users map[string]*User
	def   *User
	Log   Log
}

// NewRegistry holds only the default user (on nopass ~* &* +@all).
func NewRegistry(t *Table) *Registry {
	r := &Registry{env: Env{Table: t}, users: map[string]*User{}}
	r.def = &User{Name: "default"}
	r.def.rules.Store(r.env.DefaultRules())
	r.users["default"] = r.def
	return r
}

// Table returns the command table.
func (r *Registry) Table() *Table { return r.env.Table }

// SetPubsubDefault sets acl-pubsub-default (true: allchannels) for the
// selectors made from now on.
func (r *Registry) SetPubsubDefault(all bool) {
	r.mu.Lock()
	r.env.AllChannels = all
	r.mu.Unlock()
}

// Default is the default user.
func (r *Registry) Default() *User { return r.def }

// Get finds a user by name (case-sensitive, as Redis).
func (r *Registry) Get(name string) *User {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[name]
}

// Users returns the users sorted by name (Redis's radix tree order).
func (r *Registry) Users() []*User {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*User, 0, len(r.users))
	for _, u := range r.users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SetUserError is ACL SETUSER's error reply text (without "ERR ").
func SetUserError(op string, err error) string {
	if u, ok := err.(*UnmatchedError); ok {
		return u.Error()
	}
	return "Error in ACL SETUSER modifier '" + op + "': " + err.Error()
}

// SetUser creates or changes a user, all modifiers or none. It returns the
// user, its rules before (nil for a new user) and after.
func (r *Registry) SetUser(name string, ops [][]byte) (u *User, old, now *Rules, errText string) {
	if hasSpaces([]byte(name)) {
		return nil, nil, nil, "Usernames can't contain spaces or null characters"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u = r.users[name]
	base := (*Rules)(nil)
	if u != nil {
		base = u.Load()
	} else {
		base = r.env.NewRules()
	}
	n, op, err := r.env.Apply(base, ops)
	if err != nil {
		return nil, nil, nil, SetUserError(op, err)
	}
	if u == nil {
		u = &User{Name: name}
		r.users[name] = u
	} else {
		old = base
	}
	u.rules.Store(n)
	return u, old, n, ""
}

// SetDefaultPassword is requirepass: "" makes the default user nopass.
func (r *Registry) SetDefaultPassword(pass string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := [][]byte{[]byte("resetpass"), []byte("nopass")}
	if pass != "" {
		ops[1] = append([]byte(">"), pass...)
	}
	n, _, _ := r.env.Apply(r.def.Load(), ops)
	r.def.rules.Store(n)
}

// DelUser removes users; the default one cannot be. It returns the users
// removed (their connections are to be closed).
func (r *Registry) DelUser(names []string) (removed []*User, errText string) {
	for _, n := range names {
		if n == "default" {
			return nil, "The 'default' user cannot be removed"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if u := r.users[n]; u != nil {
			delete(r.users, n)
			u.deleted.Store(true)
			removed = append(removed, u)
		}
	}
	return removed, ""
}

// Authenticate checks a user name and password (Redis's
// ACLCheckUserCredentials): the user must exist and be on, and be nopass or
// have the password's hash.
func (r *Registry) Authenticate(name, pass []byte) *User {
	r.mu.Lock()
	u := r.users[string(name)]
	r.mu.Unlock()
	if u == nil {
		return nil
	}
	rl := u.Load()
	if !rl.Enabled() {
		return nil
	}
	if rl.NoPass() {
		return u
	}
	h := []byte(HashPassword(pass))
	for _, p := range rl.passwords {
		if subtle.ConstantTimeCompare(h, []byte(p)) == 1 {
			return u
		}
	}
	return nil
}

// GenPass is ACL GENPASS: bits of randomness as lower-case hex.
func GenPass(bits int) string {
	chars := (bits + 3) / 4
	b := make([]byte, (chars+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic("acl: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)[:chars]
}
