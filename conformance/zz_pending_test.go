package conformance_test

import "github.com/anysqs/anysqs/capabilities"

func redriveCases() []tc     { return nil }
func retentionCases() []tc   { return nil }
func longPollCases() []tc    { return nil }
func fifoCases() []tc        { return nil }
func purgeTagCases() []tc    { return nil }
func concurrencyCases() []tc { return nil }
func restartCases() []tc     { return nil }
func unsupportedProbes() map[capabilities.ID]func(*H) { return nil }
