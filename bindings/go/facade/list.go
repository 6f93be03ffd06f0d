package facade

import (
	"context"
	"fmt"
	"iter"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Query filters List: the states to list (nil = all). StatePaused lists
// paused=true, StateRunning status=running; Snapshotting and Killed have
// no listing and match nothing. Several states are queried one by one and
// merged without duplicates.
type Query struct {
	States []State
}

type plan struct {
	paused *bool
	status string
}

// Paginator pages over one or more state queries with offsets (UC-08). It
// is used by one goroutine at a time.
type Paginator struct {
	client *sandbox0.Client
	limit  int
	plans  []plan
	index  int
	offset int
	seen   map[string]bool
	// HasNext mirrors the last page's has_more and the queries left.
	HasNext bool
}

// List returns a paginator over the sandboxes matching q (nil = all) with
// pages of limit (1..200; 0 = 100). No request is sent yet. A nil client
// is ErrInvalidArgument.
func List(client *sandbox0.Client, q *Query, limit int) (*Paginator, error) {
	if client == nil {
		return nil, invalid("client is required")
	}
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > 200 {
		return nil, invalid("limit must be between 1 and 200")
	}
	p := &Paginator{client: client, limit: limit, seen: map[string]bool{}}
	if q == nil || q.States == nil {
		p.plans = []plan{{}}
	} else {
		yes := true
		for _, s := range q.States {
			var pl *plan
			switch s {
			case StatePaused:
				pl = &plan{paused: &yes}
			case StateRunning:
				pl = &plan{status: string(sandbox0.SandboxStatusRunning)}
			case StateSnapshotting, StateKilled:
			default:
				return nil, invalid(fmt.Sprintf("unknown state %q", s))
			}
			if pl != nil && !hasPlan(p.plans, *pl) {
				p.plans = append(p.plans, *pl)
			}
		}
	}
	p.HasNext = len(p.plans) > 0
	return p, nil
}

func hasPlan(ps []plan, p plan) bool {
	for _, q := range ps {
		if (q.paused == nil) == (p.paused == nil) && q.status == p.status {
			return true
		}
	}
	return false
}

// NextToken is the opaque position ("<query>:<offset>"), "" when drained.
func (p *Paginator) NextToken() string {
	if !p.HasNext {
		return ""
	}
	return fmt.Sprintf("%d:%d", p.index, p.offset)
}

// NextItems returns the next non-empty page (empty once drained): one
// request per call, more only to skip queries that match nothing.
func (p *Paginator) NextItems(ctx context.Context) ([]Info, error) {
	for p.HasNext {
		pl := p.plans[p.index]
		limit, offset := p.limit, p.offset
		page, err := p.client.ListSandboxes(ctx, &sandbox0.ListSandboxesOptions{
			Status: pl.status, Paused: pl.paused, Limit: &limit, Offset: &offset})
		if err != nil {
			return nil, err
		}
		var out []Info
		for _, sb := range page.Sandboxes {
			if !p.seen[sb.ID] {
				p.seen[sb.ID] = true
				out = append(out, infoOf(sb))
			}
		}
		if page.HasMore && len(page.Sandboxes) > 0 {
			p.offset += len(page.Sandboxes)
		} else {
			p.index++
			p.offset = 0
			p.HasNext = p.index < len(p.plans)
		}
		if len(out) > 0 || !p.HasNext {
			return out, nil
		}
	}
	return nil, nil
}

// All iterates over every remaining item; an error is yielded once, last.
func (p *Paginator) All(ctx context.Context) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		for p.HasNext {
			items, err := p.NextItems(ctx)
			if err != nil {
				yield(Info{}, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
}
