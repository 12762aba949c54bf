docket keygen -o signing.key | sed -E "s/[0-9a-f]{64}/<key id>/"
stat -c "%a %n" signing.key signing.key.pub
head -1 signing.key
head -1 signing.key.pub
