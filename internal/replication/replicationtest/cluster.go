// Package replicationtest starts real nats-server clusters for tests of
// replicated mode: embedded servers with JetStream, routes between them
// on loopback, free ports, a store directory per node, and JetStream
// sync_interval: always (Options.SyncAlways), as replicated mode requires.
//
// Every listener is on 127.0.0.1 and unauthenticated (loopback only).
// Waits are on conditions (routes up, meta leader elected, stream
// current), bounded by Deadline.
package replicationtest

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Deadline bounds every wait of the harness.
const Deadline = 30 * time.Second

// ClusterName is the NATS cluster name of every harness cluster.
const ClusterName = "hikoutei-test"

// Node is one server of a Cluster.
type Node struct {
	Name       string
	opts       server.Options // kept to restart with the same ports and store
	srv        *server.Server // nil while stopped
	clientPort int
}

// Cluster is an n-node JetStream cluster on loopback, shut down when the
// test ends.
type Cluster struct {
	t     testing.TB
	Nodes []*Node
}

// StartCluster starts n servers (n ≥ 1; n = 1 is a single server without
// clustering) and waits until every one is ready and, for n > 1, the
// routes are up and the JetStream meta leader is elected and known to
// all.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	c := &Cluster{t: t}
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i]))
	}
	for i := range n {
		c.Nodes = append(c.Nodes, &Node{Name: fmt.Sprintf("n%d", i+1), clientPort: ports[i],
			opts: nodeOptions(fmt.Sprintf("n%d", i+1), ports[i], ports[n+i], routes, t.TempDir(), n > 1)})
	}
	t.Cleanup(c.Shutdown)
	for i := range c.Nodes {
		c.start(i)
	}
	c.WaitFormed()
	return c
}

// nodeOptions is one node's configuration: JetStream on a file store
// with fsync after every write, loopback listeners.
func nodeOptions(name string, port, routePort int, routes []string, dir string, clustered bool) server.Options {
	o := server.Options{
		ServerName: name, Host: "127.0.0.1", Port: port,
		NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: dir,
		JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 1 << 30,
		SyncAlways: true, // sync_interval: always
	}
	if clustered {
		o.Cluster = server.ClusterOpts{Name: ClusterName, Host: "127.0.0.1", Port: routePort}
		o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	}
	return o
}

// freePorts reserves n distinct loopback ports by binding them, then
// releases them for the servers. A port taken by someone else in between
// makes the start fail loudly.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	nd := c.Nodes[i]
	opts := nd.opts // a fresh copy: the server mutates its options
	srv, err := server.NewServer(&opts)
	if err != nil {
		c.t.Fatalf("node %s: %v", nd.Name, err)
	}
	srv.Start()
	if !srv.ReadyForConnections(Deadline) {
		srv.Shutdown()
		c.t.Fatalf("node %s not ready within %s", nd.Name, Deadline)
	}
	nd.srv = srv
}

// Server returns node i's running server (nil while stopped).
func (c *Cluster) Server(i int) *server.Server { return c.Nodes[i].srv }

// StoreDir returns node i's JetStream store directory (tests that search
// what the servers' files hold).
func (c *Cluster) StoreDir(i int) string { return c.Nodes[i].opts.StoreDir }

// URLs returns the client URLs of all nodes, comma-separated, for
// nats.Connect (the client fails over between them).
func (c *Cluster) URLs() string {
	var us []string
	for _, nd := range c.Nodes {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", nd.clientPort))
	}
	return strings.Join(us, ",")
}

// Connect returns a client of the cluster that reconnects forever and is
// closed when the test ends.
func (c *Cluster) Connect(opts ...nats.Option) *nats.Conn {
	c.t.Helper()
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}, opts...)
	nc, err := nats.Connect(c.URLs(), opts...)
	if err != nil {
		c.t.Fatalf("connect: %v", err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// Stop shuts node i down (as a crash of the process: nothing is flushed
// beyond what JetStream already synced) and waits until it is down.
func (c *Cluster) Stop(i int) {
	nd := c.Nodes[i]
	if nd.srv == nil {
		return
	}
	nd.srv.Shutdown()
	nd.srv.WaitForShutdown()
	nd.srv = nil
}

// Restart starts a stopped node i again on its ports and store directory
// and waits until the cluster is formed again.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Nodes[i].srv != nil {
		c.t.Fatalf("node %s is running", c.Nodes[i].Name)
	}
	c.start(i)
	c.WaitFormed()
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for i := range c.Nodes {
		c.Stop(i)
	}
}

// StreamLeader returns the index of the running node leading stream's
// replica group, or -1.
func (c *Cluster) StreamLeader(stream string) int {
	for i, nd := range c.Nodes {
		if nd.srv != nil && nd.srv.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// running returns the running servers.
func (c *Cluster) running() []*server.Server {
	var out []*server.Server
	for _, nd := range c.Nodes {
		if nd.srv != nil {
			out = append(out, nd.srv)
		}
	}
	return out
}

// WaitFormed waits until every running node has routes to the other
// running nodes and, when clustered, exactly one is the JetStream meta
// leader, every one is current with it, and the leader sees every
// running node as an online peer (so an R3 asset can be placed).
func (c *Cluster) WaitFormed() {
	c.t.Helper()
	c.waitFor("cluster formed with a meta leader", func() bool {
		srvs := c.running()
		if len(c.Nodes) == 1 {
			return len(srvs) == 1 && srvs[0].JetStreamEnabled()
		}
		leaders := 0
		for _, s := range srvs {
			if s.NumRoutes() < len(srvs)-1 || !s.JetStreamIsCurrent() {
				return false
			}
			if s.JetStreamIsLeader() {
				// The leader places replicas only on peers it has stats from.
				if len(s.JetStreamClusterPeers()) < len(srvs) {
					return false
				}
				leaders++
			}
		}
		return leaders == 1
	})
}

// WaitStreamCurrent waits until every running node that holds a replica
// of stream (global account) is current with its leader, and one is
// the leader (at once for a single server).
func (c *Cluster) WaitStreamCurrent(stream string) {
	c.t.Helper()
	c.waitFor("stream "+stream+" current on every running replica", func() bool {
		if len(c.Nodes) == 1 {
			return true
		}
		leader := false
		for _, s := range c.running() {
			if !s.JetStreamIsStreamAssigned(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
				continue
			}
			if !s.JetStreamIsStreamCurrent(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
				return false
			}
			leader = leader || s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream)
		}
		return leader
	})
}

// waitFor polls cond (server state with no channel to wait on) until it
// holds, failing the test after Deadline.
func (c *Cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.After(Deadline)
	for !cond() {
		select {
		case <-tick.C:
		case <-end:
			c.t.Fatalf("timed out after %s waiting for %s", Deadline, what)
		}
	}
}
