package run

// The run's read model moved to internal/runstate (events, the replayed
// state, the view, projection and cost). These names keep internal/run and
// its callers compiling unchanged while they move to runstate: a
// transitional shim, new code imports runstate.

import (
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

type (
	CostLine           = runstate.CostLine
	CostReport         = runstate.CostReport
	RunStarted         = runstate.RunStarted
	PhasesMS           = runstate.PhasesMS
	RunResumed         = runstate.RunResumed
	TaskScheduled      = runstate.TaskScheduled
	BatchMerged        = runstate.BatchMerged
	TaskMergeFailed    = runstate.TaskMergeFailed
	GraphChanged       = runstate.GraphChanged
	TaskChange         = runstate.TaskChange
	IntegrationAdopted = runstate.IntegrationAdopted
	LevelStarted       = runstate.LevelStarted
	TaskBlocked        = runstate.TaskBlocked
	AttemptStarted     = runstate.AttemptStarted
	AttemptPIDs        = runstate.AttemptPIDs
	AttemptFinished    = runstate.AttemptFinished
	TaskFailed         = runstate.TaskFailed
	LevelMerged        = runstate.LevelMerged
	LevelFailed        = runstate.LevelFailed
	GateFinished       = runstate.GateFinished
	RunFinished        = runstate.RunFinished
	RunStopped         = runstate.RunStopped
	ResetWait          = runstate.ResetWait
	BreakerChange      = runstate.BreakerChange
	ZoneChange         = runstate.ZoneChange
	LaunchPause        = runstate.LaunchPause
	ConcurrencyChange  = runstate.ConcurrencyChange
	Live               = runstate.Live
	liveAttempt        = runstate.LiveAttempt
	Snapshot           = runstate.GovernorSnapshot
	Tokens             = runstate.Tokens
	Range              = runstate.Range
	TaskProjection     = runstate.TaskProjection
	LevelProjection    = runstate.LevelProjection
	Projection         = runstate.Projection
	ProjectOptions     = runstate.ProjectOptions
	TaskState          = runstate.TaskState
	OpenAttempt        = runstate.OpenAttempt
	State              = runstate.State
	Status             = runstate.Status
	TransitionError    = runstate.TransitionError
	RunState           = runstate.RunState
	View               = runstate.View
	GateView           = runstate.GateView
	CoordinatorView    = runstate.CoordinatorView
	LevelView          = runstate.LevelView
	TaskView           = runstate.TaskView
	AbandonedView      = runstate.AbandonedView
	RunningView        = runstate.RunningView
	Liveness           = runstate.Liveness
)

const (
	EvRunStarted         = runstate.EvRunStarted
	EvRunResumed         = runstate.EvRunResumed
	EvGraphChanged       = runstate.EvGraphChanged
	EvIntegrationAdopted = runstate.EvIntegrationAdopted
	EvLevelStarted       = runstate.EvLevelStarted
	EvAttemptStarted     = runstate.EvAttemptStarted
	EvAttemptPIDs        = runstate.EvAttemptPIDs
	EvAttemptVerifying   = runstate.EvAttemptVerifying
	EvAttemptFinished    = runstate.EvAttemptFinished
	EvTaskFailed         = runstate.EvTaskFailed
	EvTaskRequeued       = runstate.EvTaskRequeued
	EvTaskBlocked        = runstate.EvTaskBlocked
	EvLevelMerged        = runstate.EvLevelMerged
	EvLevelFailed        = runstate.EvLevelFailed
	EvGateFinished       = runstate.EvGateFinished
	EvRunStopped         = runstate.EvRunStopped
	EvRunFinished        = runstate.EvRunFinished
	EvTaskScheduled      = runstate.EvTaskScheduled
	EvBatchMerged        = runstate.EvBatchMerged
	EvTaskMergeFailed    = runstate.EvTaskMergeFailed
	MaxChangedListed     = runstate.MaxChangedListed
	EvResetWait          = runstate.EvResetWait
	BreakerClosed        = runstate.BreakerClosed
	BreakerOpen          = runstate.BreakerOpen
	BreakerHalfOpen      = runstate.BreakerHalfOpen
	ZoneGreen            = runstate.ZoneGreen
	ZoneYellow           = runstate.ZoneYellow
	ZoneRed              = runstate.ZoneRed
	EvBreaker            = runstate.EvBreaker
	EvZone               = runstate.EvZone
	EvPaused             = runstate.EvPaused
	EvConcurrency        = runstate.EvConcurrency
	LiveFile             = runstate.LiveFile
	EvRunProjected       = runstate.EvRunProjected
	StatusPending        = runstate.StatusPending
	StatusReady          = runstate.StatusReady
	StatusRunning        = runstate.StatusRunning
	StatusVerifying      = runstate.StatusVerifying
	StatusCommitted      = runstate.StatusCommitted
	StatusMerged         = runstate.StatusMerged
	StatusRetryWait      = runstate.StatusRetryWait
	StatusFailed         = runstate.StatusFailed
	StatusBlocked        = runstate.StatusBlocked
	StatusCancelled      = runstate.StatusCancelled
	RunNotStarted        = runstate.RunNotStarted
	RunRunning           = runstate.RunRunning
	RunDelivered         = runstate.RunDelivered
	RunNotDelivered      = runstate.RunNotDelivered
	RunHalted            = runstate.RunHalted
	RunDead              = runstate.RunDead
)

var (
	Cost          = runstate.Cost
	ReadLive      = runstate.ReadLive
	TokensOf      = runstate.TokensOf
	ModelFor      = runstate.ModelFor
	DocsOnly      = runstate.DocsOnly
	Project       = runstate.Project
	HistoryLogs   = runstate.HistoryLogs
	NewState      = runstate.NewState
	Replay        = runstate.Replay
	CanTransition = runstate.CanTransition
	ErrBadEvent   = runstate.ErrBadEvent
	Statuses      = runstate.Statuses
)

// BuildView is runstate.BuildView with the integration branch as the layout
// names it.
func BuildView(feature string, st *State, g *spec.Graph, pathsGraph *spec.Graph, lv Liveness) View {
	return runstate.BuildView(feature, IntegrationBranch(feature), st, g, pathsGraph, lv)
}
