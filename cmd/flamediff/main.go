// Command flamediff folds CPU stacks of database servers, maps functions
// renamed between versions onto one name, and reports where the CPU went
// between version A and version B.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
