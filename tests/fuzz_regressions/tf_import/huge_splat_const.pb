
7
xPlaceholder*
T0*
shape:*
dtype0
5
bigConst*
T0*
valueB€€@€€@:

yAddxbig*
T0