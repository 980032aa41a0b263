package main

import "github.com/spf13/cobra"

// Placeholder until fold.go lands.
func newFoldCmd(s *streams, runF func() error) *cobra.Command { return &cobra.Command{Use: "fold"} }
