"""gec.NodeArg: the description of a model input or output (made by the binding)."""


class NodeArg:
    """A model input or output, as ONNX Runtime's NodeArg describes it.

    Attributes (read-only):
        name (str): the graph input/output name.
        type (str): ONNX Runtime's type text: 'tensor(float)', 'tensor(int64)',
            'seq(tensor(float))', 'optional(tensor(float))', ...
        shape (list or None): one entry per dim: an int for a static dim, the
            dim's name (str) for a named dynamic dim, None for an unnamed one
            or one gec cannot prove at compile time; None when the rank is
            unknown. For sequences and optionals, the element's shape.
        dtype (numpy.dtype or None): the numpy dtype arrays must have (object
            for strings); None for bfloat16, which numpy has no dtype for.
        kind (str): 'tensor', 'sequence' or 'optional'.
    """

    __slots__ = ("_name", "_type", "_shape", "_dtype", "_kind")

    def __init__(self, name, type, shape, dtype, kind):  # noqa: A002  (ONNX Runtime's attribute name)
        self._name, self._type, self._shape, self._dtype, self._kind = name, type, shape, dtype, kind

    name = property(lambda self: self._name)
    type = property(lambda self: self._type)
    # a copy, so that changing it changes no other caller's view
    shape = property(lambda self: None if self._shape is None else list(self._shape))
    dtype = property(lambda self: self._dtype)
    kind = property(lambda self: self._kind)

    def __repr__(self):
        return f"NodeArg(name={self._name!r}, type={self._type!r}, shape={self._shape!r})"

    def __eq__(self, other):
        return isinstance(other, NodeArg) and (self._name, self._type, self._shape, self._kind) == (
            other._name, other._type, other._shape, other._kind)

    def __hash__(self):
        return hash((self._name, self._type))
