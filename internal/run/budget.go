package run

import (
	"fmt"

	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

// modelOf is the model a task's attempts are launched with.
func (c *Coordinator) modelOf(t *spec.Task) string {
	m, _ := runstate.ModelFor(c.cfg.Models, t)
	return m
}

// halted returns why launching stopped, nil while it goes on.
func (c *Coordinator) halted() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.halt
}

// stopLaunching stops every launch for good in this rush (the first cause
// wins); with cancelRunning the attempts in flight are stopped too,
// otherwise they finish.
func (c *Coordinator) stopLaunching(e *Error, cancelRunning bool) {
	c.mu.Lock()
	first := c.halt == nil
	if first {
		c.halt = e
	}
	h := c.halt
	c.mu.Unlock()
	if first && !cancelRunning {
		c.progress.note("%s: no new attempt starts; the running ones finish", h.Err)
	}
	if cancelRunning && c.cancel != nil {
		c.cancel(h)
	}
}

// reserve admits one attempt of the task under budget.run_usd: what the
// run spent (every attempt in its log, resumes included), plus the
// projected cost of the attempts in flight, plus this one's must stay
// within it. The attempt's projection is reserved until it finishes.
func (c *Coordinator) reserve(task string) *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := c.projection.Task(task).AttemptUSD
	limit := c.cfg.Budget.RunUSD
	if limit > 0 {
		inFlight := 0.0
		for _, v := range c.reserved {
			inFlight += v
		}
		if spent := c.state.CostUSD; spent+inFlight+next > limit {
			return &Error{Kind: Budget, Feature: c.feature, Task: task, Err: fmt.Errorf(
				"budget.run_usd $%.2f reached: spent $%.2f, $%.2f projected for the %d attempt(s) running, the next attempt (%s) projected at $%.2f",
				limit, spent, inFlight, len(c.reserved), task, next)}
		}
	}
	c.reserved[task] = next
	return nil
}

func (c *Coordinator) unreserve(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reserved, task)
}

// overBudget reports a run whose spending passed budget.run_usd.
func (c *Coordinator) overBudget() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit := c.cfg.Budget.RunUSD; limit > 0 && c.state.CostUSD >= limit {
		return &Error{Kind: Budget, Feature: c.feature, Err: fmt.Errorf("budget.run_usd $%.2f reached: spent $%.2f", limit, c.state.CostUSD)}
	}
	return nil
}

// accountCause names an account refusal for the report.
func accountCause(reason string) string {
	switch reason {
	case outcome.ReasonCredit, outcome.ReasonBilling:
		return "the API account's credit balance is too low"
	case outcome.ReasonUsageLimit:
		return "the API account reached its usage limit"
	case outcome.ReasonAuth:
		return "the API key was refused (revoked, invalid or without permission)"
	}
	return "the API refused the account (" + reason + ")"
}

// projection says what the run is expected to cost; a resume says it of
// the tasks it still has to merge (merged is how many are).
func (p *progress) projection(pr *runstate.Projection, merged func(task string) bool, spent, limit float64) {
	var left runstate.Range
	n := 0
	for _, t := range pr.Tasks {
		if !merged(t.Task) {
			left.Add(t.Range)
			n++
		}
	}
	if n == len(pr.Tasks) {
		p.printf("projected cost: $%.2f expected (range $%.2f–$%.2f, %s) for %d task(s)%s",
			pr.Expected, pr.Low, pr.High, pr.BasisText(), len(pr.Tasks), budgetText(spent, limit))
		return
	}
	p.printf("projected cost: $%.2f expected (range $%.2f–$%.2f, %s) for the %d task(s) not merged yet, of $%.2f for all %d%s",
		left.Expected, left.Low, left.High, pr.BasisText(), n, pr.Expected, len(pr.Tasks), budgetText(spent, limit))
}

func (p *progress) account(task, reason, detail, reset string) {
	when := ""
	if reset != "" {
		when = "; resets " + reset
	}
	p.printf("  %s: %s: %s%s; no new attempt starts", task, accountCause(reason), textx.Clip(textx.OneLine(detail), 200), when)
}

func (p *progress) halted(e *Error) {
	switch e.Kind {
	case Budget:
		p.printf("zerg: launching stopped by the run budget: %v", e.Err)
	case Account:
		p.printf("zerg: launching stopped: %v", e.Err)
	}
}

func budgetText(spent, limit float64) string {
	switch {
	case limit > 0 && spent > 0:
		return fmt.Sprintf("; run budget $%.2f, $%.2f spent already", limit, spent)
	case limit > 0:
		return fmt.Sprintf("; run budget $%.2f", limit)
	}
	return ""
}
