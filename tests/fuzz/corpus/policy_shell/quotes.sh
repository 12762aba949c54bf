echo 'a b' "c\"d" e\ f\
x