// Package lab provides the server side of the version lab of MariaDB and
// MySQL (`flamediff bench`): the bench config (ParseConfig), servers
// fetched from Debian suites into a cache directory with a private apt
// state (Fetcher, derived from this machine's apt sources by SystemSources
// and FindMirror), installed servers (Installed), each of a Kind (MariaDB
// or MySQL, from its version: KindOf), and the lifecycle of a private
// server on a unix socket (StartServer, Server.Prepare, Server.Stop),
// bootstrapped and configured as its kind needs. Run (or Start,
// Session.Measure and Session.Close) runs the matrix: every workload on
// every server, repeated, the servers in a rotating order, each
// measurement a recording session of package record. WriteReport hands the
// measurements to package benchreport, laid out as the config says; the
// figures and pages are benchreport's.
//
// Parsers take an io.Reader or bytes and never touch the system
// (ParseConfig, ParseSourcesList, ParseDeb822Sources, ParseParagraphs,
// ParseDepends, InstalledPackages, ParseLoaderError, ParseVersionOutput,
// KindOf). Everything else is Linux only: it runs apt-get, dpkg and
// mariadbd or mysqld.
// Nothing is written outside the cache directory, the work directory a
// server is given and Run's RunOptions.Out; every process started runs in a process group of
// its own and is killed on every way out.
package lab
