package config

import (
	"fmt"
)

// DefaultReplicas is the replica count of replicated mode's stream and
// lease bucket.
const DefaultReplicas = 3

// Replication is replicated mode as the environment configures it.
type Replication struct {
	// On: HIKOUTEI_REPLICATION=jetstream.
	On bool
	// URL is HIKOUTEI_NATS_URL (the cluster; required when On).
	URL string
	// Store is HIKOUTEI_REPLICATION_STORE ("" = the default name).
	Store string
	// Replicas is HIKOUTEI_REPLICATION_REPLICAS (3 or 5; default 3).
	Replicas int
}

// LoadReplication reads the replication variables. Errors: *EnvError
// wrapping ErrInvalidReplication (or ErrInvalidNATSURL) naming the
// variable, never repeating a URL.
func LoadReplication(lookup Lookup) (Replication, error) {
	if lookup == nil {
		lookup = OS
	}
	r := Replication{Store: get(lookup, EnvReplicationStore), Replicas: DefaultReplicas}
	mode, replicas := get(lookup, EnvReplication), get(lookup, EnvReplicationReplicas)
	switch {
	case mode == "" && (r.Store != "" || replicas != ""):
		return r, invalidReplication(EnvReplication, "unset while "+EnvReplicationStore+" or "+EnvReplicationReplicas+" is set")
	case mode == "":
		return r, nil
	case mode != ReplicationJetStream:
		return r, invalidReplication(EnvReplication, "must be "+ReplicationJetStream)
	}
	r.On = true
	if err := r.load(lookup, replicas); err != nil {
		return r, err
	}
	return r, nil
}

func (r *Replication) load(lookup Lookup, replicas string) error {
	url, err := LoadNATSURL(lookup)
	if err != nil {
		return err
	}
	if url == "" {
		return invalidReplication(EnvNATSURL, "must name the NATS cluster in replicated mode")
	}
	r.URL = url
	if r.Store != "" && !validStoreName(r.Store) {
		return invalidReplication(EnvReplicationStore, "must be 1-128 characters of A-Z a-z 0-9 _ -")
	}
	switch replicas {
	case "", "3":
	case "5":
		r.Replicas = 5
	default:
		return invalidReplication(EnvReplicationReplicas, "must be 3 or 5")
	}
	return nil
}

func validStoreName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func invalidReplication(name, problem string) error {
	return &EnvError{Var: name, Err: fmt.Errorf("%w: %s", ErrInvalidReplication, problem)}
}
