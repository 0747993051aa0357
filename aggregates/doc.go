// Package aggregates holds the store's decisions: given current state, a
// command and `now`, return events or a typed error. Pure: no I/O, no clock,
// no randomness (ARCHITECTURE.md "Folders").
package aggregates
