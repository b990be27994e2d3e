package acl

import (
	"errors"
	"fmt"
	"strings"
)

// The aclfile holds one user a line, "user <name> <rule> ...", as ACL SAVE
// writes it; blank lines are skipped, anything else (comments included) is
// an error, and one error anywhere leaves the users as they were.

// ConfigUser is a "user" directive of redis.conf: its name and rules.
type ConfigUser struct {
	Name  string
	Rules [][]byte
}

// CheckConfigUser validates a redis.conf "user" directive (argv without
// "user") as Redis's ACLAppendUserForLoading: unknown commands are allowed
// here, other errors are not. seen holds the names met so far.
func (r *Registry) CheckConfigUser(argv []string, seen map[string]bool) (ConfigUser, error) {
	if len(argv) < 1 {
		return ConfigUser{}, errors.New("Wrong format")
	}
	if seen[argv[0]] {
		return ConfigUser{}, ErrDuplicateUser
	}
	ops := make([][]byte, len(argv)-1)
	for i, a := range argv[1:] {
		ops[i] = []byte(a)
	}
	merged, _ := MergeSelectors(ops)
	if merged == nil {
		return ConfigUser{}, errors.New("Unmatched parenthesis in acl selector")
	}
	fake := r.env.NewRules().clone()
	for _, op := range merged {
		if err := fake.apply(&r.env, op); err != nil && err != ErrUnknownName {
			return ConfigUser{}, err
		}
	}
	seen[argv[0]] = true
	return ConfigUser{Name: argv[0], Rules: merged}, nil
}

// LoadConfigUsers creates the users of redis.conf at startup (the default
// user is reset first when it is among them). disabled names the users left
// off, for the caller's notice.
func (r *Registry) LoadConfigUsers(users []ConfigUser) (disabled []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cu := range users {
		if hasSpaces([]byte(cu.Name)) {
			return nil, errors.New("Spaces not allowed in ACL usernames")
		}
		var base *Rules
		u := r.users[cu.Name]
		if u == nil {
			base = r.env.NewRules()
		} else {
			n, _, _ := r.env.Apply(u.Load(), [][]byte{[]byte("reset")})
			base = n
		}
		n := base.clone()
		for _, op := range cu.Rules {
			if e := n.apply(&r.env, op); e != nil {
				return nil, fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, cu.Name, e)
			}
		}
		n.finish()
		if u == nil {
			u = &User{Name: cu.Name}
			r.users[cu.Name] = u
		}
		u.rules.Store(n)
		if !n.Enabled() {
			disabled = append(disabled, cu.Name)
		}
	}
	return disabled, nil
}

// ParseFile reads an aclfile's text into users, with Redis's error texts
// (name is the file's name as configured); errs is "" when it is valid.
func (e *Env) ParseFile(text, name string) (users map[string]*Rules, order []string, errs string) {
	var b strings.Builder
	users = map[string]*Rules{}
	for i, line := range strings.Split(text, "\n") {
		ln := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		var argv []string
		for _, a := range strings.Split(line, " ") {
			if a != "" {
				argv = append(argv, a)
			}
		}
		if len(argv) == 0 {
			continue
		}
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&b, "%s:%d should start with user keyword followed by the username. ", name, ln)
			continue
		}
		if hasSpaces([]byte(argv[1])) {
			fmt.Fprintf(&b, "'%s:%d: username '%s' contains invalid characters. ", name, ln, argv[1])
			continue
		}
		if users[argv[1]] != nil {
			fmt.Fprintf(&b, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], ln)
			continue
		}
		ops := make([][]byte, len(argv)-2)
		for j, a := range argv[2:] {
			ops[j] = []byte(a)
		}
		merged, _ := MergeSelectors(ops)
		if merged == nil {
			fmt.Fprintf(&b, "%s:%d: Unmatched parenthesis in selector definition.", name, ln)
		}
		rl := e.NewRules().clone()
		syntax := false
		for _, op := range merged {
			op = []byte(strings.Trim(string(op), "\t\r\n"))
			if err := rl.apply(e, op); err != nil {
				if err == ErrUnknownName {
					fmt.Fprintf(&b, "%s:%d: Error in applying operation '%s': %s. ", name, ln, op, err)
				} else if !syntax {
					fmt.Fprintf(&b, "%s:%d: %s. ", name, ln, err)
					syntax = true
				}
			}
		}
		rl.finish()
		users[argv[1]] = rl
		order = append(order, argv[1])
	}
	if b.Len() > 0 {
		b.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, nil, b.String()
	}
	return users, order, ""
}

// LoadFile replaces every user with the aclfile's (ACL LOAD, aclfile at
// startup). The default user keeps its identity and takes the file's rules
// (or the defaults when the file has none). removed are the users replaced:
// their connections are to be closed.
func (r *Registry) LoadFile(text, name string) (removed []*User, errs string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	users, _, errs := r.env.ParseFile(text, name)
	if errs != "" {
		return nil, errs
	}
	for n, u := range r.users {
		if n != "default" {
			u.deleted.Store(true)
			removed = append(removed, u)
		}
	}
	next := map[string]*User{"default": r.def}
	for n, rl := range users {
		if n == "default" {
			continue
		}
		u := &User{Name: n}
		u.rules.Store(rl)
		next[n] = u
	}
	if d := users["default"]; d != nil {
		r.def.rules.Store(d)
	} else {
		r.def.rules.Store(r.env.DefaultRules())
	}
	r.users = next
	return removed, ""
}

// FileText is the aclfile ACL SAVE writes: every user, sorted by name.
func (r *Registry) FileText() string {
	var b strings.Builder
	for _, u := range r.Users() {
		b.WriteString("user " + u.Name + " " + u.Load().Describe(r.env.Table) + "\n")
	}
	return b.String()
}

// ListLine is one ACL LIST line.
func (r *Registry) ListLine(u *User) string {
	return "user " + u.Name + " " + u.Load().Describe(r.env.Table)
}
