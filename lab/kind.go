package lab

import (
	"fmt"
	"strings"
)

// Kind is the server a binary is: MariaDB or MySQL. The two share the
// protocol, sysbench and the profile's entry points, but not their
// bootstrap or all of their options (see StartServer).
type Kind string

// The kinds of server.
const (
	MariaDB Kind = "mariadb"
	MySQL   Kind = "mysql"
)

// Kinds are the values a config's kind: accepts.
var Kinds = []string{string(MariaDB), string(MySQL)}

// KindOf returns the kind of a server version string, as `--version` or
// SELECT VERSION() give it: MariaDB's always carry "-MariaDB"
// ("10.11.14-MariaDB-0+deb12u1", 10.x and 11.x alike); any other is
// MySQL's ("9.7.4", "8.0.36-0ubuntu0.22.04.1").
func KindOf(version string) Kind {
	if strings.Contains(version, "-MariaDB") {
		return MariaDB
	}
	return MySQL
}

// String returns the server's name as its makers write it.
func (k Kind) String() string {
	switch k {
	case MariaDB:
		return "MariaDB"
	case MySQL:
		return "MySQL"
	}
	return string(k)
}

// serverPackages are the server-core packages of each suite, by kind:
// what a server fetched from a suite runs when its spec names no package.
var serverPackages = map[Kind]map[string]string{
	MariaDB: ServerPackages,
	MySQL:   MySQLPackages,
}

// MySQLPackages are the MySQL server-core packages of each suite that has
// one (Debian releases ship MariaDB only).
var MySQLPackages = map[string]string{
	"sid": "mysql-server-core",
}

// DefaultPackage returns the server package to fetch from suite for a
// server of kind k ("" is MariaDB), or an error when the suite has none
// of that kind.
func DefaultPackage(suite string, k Kind) (string, error) {
	if k == "" {
		k = MariaDB
	}
	pkg, ok := serverPackages[k][suite]
	if !ok {
		var have []string
		for _, s := range Suites {
			if _, ok := serverPackages[k][s]; ok {
				have = append(have, s)
			}
		}
		return "", fmt.Errorf("suite %s has no %s server package (suites with one: %s)", suite, k, strings.Join(have, ", "))
	}
	return pkg, nil
}
