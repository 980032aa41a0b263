package main

import "github.com/spf13/cobra"

// Placeholder until map.go lands.
func newMapCmd(s *streams) *cobra.Command { return &cobra.Command{Use: "map"} }
