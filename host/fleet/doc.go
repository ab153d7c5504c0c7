// Package fleet holds the multi-host tests: several real `runedge serve`
// processes (the built binary) on one PostgreSQL, as in docs/operations.md "A fleet
// on PostgreSQL". It has no code of its own; see fleet_test.go and README.md.
package fleet
