#ifndef DONGNE_CEDITLINE_SHIM_H
#define DONGNE_CEDITLINE_SHIM_H
// libedit's readline interface (line editing and history for the REPL on a terminal). readline.h uses FILE
// without including stdio.h itself.
#include <stdio.h>
#include <editline/readline.h>
#endif
