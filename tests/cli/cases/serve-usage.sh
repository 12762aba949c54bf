docket init >/dev/null
docket serve; echo "exit $?"
docket serve --stdio --socket x.sock; echo "exit $?"
docket serve --socket x.sock --socket-mode 666; echo "exit $?"
docket serve --stdio --policy missing.yaml; echo "exit $?"
