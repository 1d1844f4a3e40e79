@echo off
rem Completion of "kubectl mcs ..." by kubectl's own shell completion (kubectl 1.26 or later): kubectl
rem runs kubectl_complete-mcs from PATH with the words typed after "kubectl mcs", the last one being
rem the word to complete, and the plugin answers as any cobra program does.
kubectl mcs __complete %*
