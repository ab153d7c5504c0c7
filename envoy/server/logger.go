package server

import (
	"fmt"
	"log/slog"
)

// logger gives go-control-plane's logging interface to slog. Its debug
// and info lines are per request, so both go to debug.
type logger struct{ l *slog.Logger }

func (g logger) Debugf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g logger) Infof(format string, args ...any)  { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g logger) Warnf(format string, args ...any)  { g.l.Warn(fmt.Sprintf(format, args...)) }
func (g logger) Errorf(format string, args ...any) { g.l.Error(fmt.Sprintf(format, args...)) }
