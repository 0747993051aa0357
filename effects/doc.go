// Package effects holds the sync workers: the outbox dispatcher, the prober,
// the reconciliation scanner and the User_Input poller.
package effects
