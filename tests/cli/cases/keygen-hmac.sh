docket keygen --hmac -o pseudo.key
stat -c "%a %n" pseudo.key
wc -c < pseudo.key
