/* help.h — the help text of the gpuledger command and of each verb. */
#ifndef GL_HELP_H
#define GL_HELP_H

extern const char gl_usage_main[], gl_usage_report[], gl_usage_leaks[], gl_usage_holes[], gl_usage_gate[],
    gl_usage_diff[], gl_usage_export[], gl_usage_summary[];

#endif
