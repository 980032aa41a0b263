package main

import "github.com/spf13/cobra"

// Placeholder until report.go/diff.go land.
func newReportCmd(s *streams, runF func() error) *cobra.Command { return &cobra.Command{Use: "report"} }
func newDiffCmd(s *streams, runF func() error) *cobra.Command   { return &cobra.Command{Use: "diff"} }
