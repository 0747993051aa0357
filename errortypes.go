package hikoutei

import (
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// The engine's error types answer errors.As for the root's types of the
// same shape, so that callers match only the root's.
func init() {
	engine.PublicAs = publicAs
	config.PublicAs = publicAs
}

// publicAs sets target, a pointer to a pointer to one of the root's error
// types, to err (one of the engine's) in the root's terms.
func publicAs(err error, target any) bool {
	switch t := target.(type) {
	case **SubscriptionError:
		return as(err, t, func(e *engine.SubscriptionError) *SubscriptionError { return (*SubscriptionError)(e) })
	case **SubscriptionCheckpointError:
		return as(err, t, func(e *engine.SubscriptionCheckpointError) *SubscriptionCheckpointError {
			return (*SubscriptionCheckpointError)(e)
		})
	case **ShapeChangeError:
		return as(err, t, func(e *engine.ShapeChangeError) *ShapeChangeError {
			return &ShapeChangeError{Refused: incompatibilities(e.Refused)}
		})
	case **MigrationError:
		return as(err, t, func(e *engine.MigrationError) *MigrationError { return (*MigrationError)(e) })
	case **MirrorLagError:
		return as(err, t, func(e *engine.MirrorLagError) *MirrorLagError { return &MirrorLagError{Lag: MirrorLag(e.Lag)} })
	case **EnvError:
		return as(err, t, func(e *config.EnvError) *EnvError { return (*EnvError)(e) })
	}
	return false
}

// as sets *target to conv(err) when err is an E.
func as[E, P any](err error, target *P, conv func(E) P) bool {
	e, ok := err.(E)
	if ok {
		*target = conv(e)
	}
	return ok
}
