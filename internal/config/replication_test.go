package config

import (
	"errors"
	"strings"
	"testing"
)

func TestReplicationEnvIsOffUnlessSetAndParsedStrictly(t *testing.T) {
	r, err := LoadReplication(envOf(nil))
	if err != nil || r.On {
		t.Fatalf("unset: %+v, %v; want off", r, err)
	}
	r, err = LoadReplication(envOf(map[string]string{EnvReplication: "jetstream", EnvNATSURL: "nats://a:4222,nats://b:4222",
		EnvReplicationStore: "shop-1", EnvReplicationReplicas: "5"}))
	if err != nil || !r.On || r.URL != "nats://a:4222,nats://b:4222" || r.Store != "shop-1" || r.Replicas != 5 {
		t.Fatalf("full: %+v, %v", r, err)
	}
	r, err = LoadReplication(envOf(map[string]string{EnvReplication: "jetstream", EnvNATSURL: "nats://a:4222"}))
	if err != nil || r.Replicas != DefaultReplicas || r.Store != "" {
		t.Fatalf("defaults: %+v, %v", r, err)
	}
	for name, env := range map[string]map[string]string{
		EnvReplication:         {EnvReplication: "raft", EnvNATSURL: "nats://a:4222"},
		EnvNATSURL:             {EnvReplication: "jetstream"},
		EnvReplicationStore:    {EnvReplication: "jetstream", EnvNATSURL: "nats://a:4222", EnvReplicationStore: "a.b"},
		EnvReplicationReplicas: {EnvReplication: "jetstream", EnvNATSURL: "nats://a:4222", EnvReplicationReplicas: "1"},
	} {
		_, err := LoadReplication(envOf(env))
		var ee *EnvError
		if !errors.Is(err, ErrInvalidReplication) || !errors.As(err, &ee) || ee.Var != name {
			t.Errorf("%v: %v; want invalid_replication naming %s", env, err, name)
		}
	}
	_, err = LoadReplication(envOf(map[string]string{EnvReplicationStore: "shop"}))
	if !errors.Is(err, ErrInvalidReplication) {
		t.Errorf("a store without a mode: %v", err)
	}
	secret := "nats://user:s3cret@a:4222 "
	err = Check(envOf(map[string]string{EnvReplication: "jetstream", EnvNATSURL: secret}))
	if !errors.Is(err, ErrInvalidNATSURL) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a bad cluster URL: %v", err)
	}
}
