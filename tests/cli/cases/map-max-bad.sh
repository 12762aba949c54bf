# a map cap that is not a size, or smaller than 1M, is a usage error
docket init >/dev/null
docket --map-max 12Q stats
echo "exit $?"
DOCKET_MAP_MAX=100K docket stats
echo "exit $?"
docket --map-max
