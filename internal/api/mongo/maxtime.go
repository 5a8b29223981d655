package mongo

import (
	"math"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// timeLimit is a command's maxTimeMS: the time by which it must end,
// read from the server's clock. A cursor keeps the time its command had
// left and spends it over its getMores, as mongod does.
type timeLimit struct {
	now      func() time.Time
	deadline time.Time
}

// check fails with 50 MaxTimeMSExpired once the deadline has passed (a
// nil limit never does).
func (l *timeLimit) check() error {
	if l == nil || l.now().Before(l.deadline) {
		return nil
	}
	return newErr(50, "MaxTimeMSExpired", "operation exceeded time limit")
}

// left is the time before the deadline (at least 0).
func (l *timeLimit) left() time.Duration {
	return max(l.deadline.Sub(l.now()), 0)
}

// parseMaxTimeMS reads the command's maxTimeMS (0 or absent: no limit)
// with mongod's checks, codes and messages: a type other than a number is
// 14, null 2, a negative value 51024, a fraction or more than 2^31-1
// milliseconds 2.
func (r *request) parseMaxTimeMS() (*timeLimit, error) {
	v, ok := r.get("maxTimeMS")
	if !ok {
		return nil, nil
	}
	var f float64
	switch x := v.(type) {
	case nil:
		return nil, badValue("maxTimeMS must be a number")
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
		if x < 0 {
			return nil, negativeMaxTime(x)
		}
		if x > math.MaxInt32 {
			return nil, badValue("%d value for maxTimeMS is out of range", x)
		}
	case float64:
		f = x
	case bson.Decimal128:
		p, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return nil, badValue("maxTimeMS must be a number")
		}
		f = p
	default:
		return nil, typeMismatch("BSON field '%s.maxTimeMS' is the wrong type '%s', expected types '[long, int, decimal, double']", r.name, typeName(v))
	}
	if math.IsNaN(f) {
		return nil, badValue("maxTimeMS has non-integral value")
	}
	if f < 0 {
		return nil, negativeMaxTime(clampInt64(math.Floor(f)))
	}
	if f > math.MaxInt32 {
		return nil, badValue("%d value for maxTimeMS is out of range", clampInt64(f))
	}
	if f != math.Trunc(f) {
		return nil, badValue("maxTimeMS has non-integral value")
	}
	if f == 0 {
		return nil, nil
	}
	now := r.s.cfg.Now
	return &timeLimit{now: now, deadline: now().Add(time.Duration(f) * time.Millisecond)}, nil
}

func negativeMaxTime(n int64) error {
	return newErr(51024, "Location51024", "BSON field 'maxTimeMS' value must be >= 0, actual value '%d'", n)
}

// clampInt64 converts f as mongod's safeNumberLong does: saturating at
// the int64 bounds.
func clampInt64(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
