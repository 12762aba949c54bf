# policy test with failing cases: a diff per case (expected vs got: the
# verdict, the engine's, the deciding rule, the reasons), exit 1; the JUnit
# report has one failure per failing case
cp "$FIXTURES/policies/authoring.yaml" "$FIXTURES/policies/authoring-fail.test.yaml" .
docket policy test authoring.yaml authoring-fail.test.yaml --junit junit.xml
rc=$?
echo "exit $rc"
grep -c '<testcase' junit.xml
grep -c '<failure' junit.xml
grep -o '<testsuites[^>]*>' junit.xml
exit $rc
