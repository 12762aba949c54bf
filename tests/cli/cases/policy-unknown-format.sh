# a format prefix docket does not know is a usage error, not "no such file"
docket policy check gemini:settings.toml
