"""gec.torch: run a PyTorch module through gec.

    import gec.torch
    fast = gec.torch.compile(model, (x,))     # torch.onnx.export + gec.compile
    y = fast(x)                               # torch tensors in, torch tensors out

The module is exported with torch.onnx.export (in eval mode, as export does
by default) into memory, compiled by gec, and loaded into a gec.Session. The
callable takes the same tensor arguments as the module's forward and returns
what forward returns (a tensor, or tuples / lists / dicts of tensors).
"""

import inspect
import io

import torch as _torch

_Tensor = _torch.Tensor
_from_numpy = _torch.from_numpy

from . import _api
from .errors import ErrorCode, GecError, InvalidArgument


class ExportError(GecError, RuntimeError):
    """torch.onnx.export could not export the module (code UNSUPPORTED); the
    message names the module's class, the original error is the __cause__.

    Attributes:
        module_name (str): the module's class name.
    """

    code = ErrorCode.UNSUPPORTED

    def __init__(self, message, code=None, module_name=None):
        super().__init__(message, code)
        self.module_name = module_name


def _flatten(obj, leaves, what):
    """Tensor leaves of nested tuples / lists / dicts, in torch.onnx's order;
    returns the structure to rebuild them."""
    if isinstance(obj, _torch.Tensor):
        leaves.append(obj)
        return None
    if isinstance(obj, (tuple, list)):
        return (type(obj), [_flatten(o, leaves, what) for o in obj])
    if isinstance(obj, dict):
        return (dict, list(obj.keys()), [_flatten(v, leaves, what) for v in obj.values()])
    raise InvalidArgument(f"{what} holds a {type(obj).__name__}; gec.torch handles tensors and tuples, lists and "
                          f"dicts of tensors", ErrorCode.INVALID_ARGUMENT)


def _rebuild(spec, it):
    if spec is None:
        return next(it)
    if spec[0] is dict:
        return {k: _rebuild(s, it) for k, s in zip(spec[1], spec[2])}
    return spec[0](_rebuild(s, it) for s in spec[1])


def _default_input_names(module, count):
    """forward's positional parameter names when they match the tensor
    count, else input_0, input_1, ..."""
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if len(names) == count and len(set(names)) == count:
        return names
    return [f"input_{i}" for i in range(count)]


class CompiledModule:
    """A module compiled by gec.torch.compile(); call it like the module.

    Attributes:
        session (gec.Session): the loaded model.
        compiled (gec.CompiledModel): the .gom bytes and the compile report.
        onnx_bytes (bytes): the exported ONNX model.
        input_names, output_names (list of str): the ONNX graph's names.
        module_name (str): the module's class name.
    """

    def __init__(self, module_name, session, compiled, onnx_bytes, input_names, output_names, out_spec, flat_args):
        self.module_name = module_name
        self.session = session
        self.compiled = compiled
        self.onnx_bytes = onnx_bytes
        self.input_names = input_names
        self.output_names = output_names
        self._out_spec = out_spec
        self._flat_args = flat_args  # example_inputs were plain tensors

    def __call__(self, *args):
        """Runs the compiled module.

        Args:
            *args: the tensors forward takes (nested tuples/lists/dicts as in
                example_inputs), of the exported dtypes and of the example
                shapes except in dynamic_axes. A contiguous CPU tensor is
                read in place; another one (strided, on another device,
                requiring grad is fine: it is detached) is copied once.

        Returns:
            What forward returns, with torch tensors that share memory with
            gec's output buffers (no copy); they do not require grad.

        Raises:
            gec.InvalidArgument: a wrong count, dtype or shape of inputs
                (the message names the module and the input).
        """
        if self._flat_args and len(args) == len(self.input_names) and all(isinstance(a, _Tensor) for a in args):
            leaves = args  # the common case, without walking a structure
        else:
            leaves = []
            _flatten(args, leaves, f"{self.module_name}: the arguments")
        if len(leaves) != len(self.input_names):
            raise InvalidArgument(f"{self.module_name}: expected {len(self.input_names)} tensor argument(s) "
                                  f"({', '.join(self.input_names)}), got {len(leaves)}", ErrorCode.INVALID_ARGUMENT)
        feed = {}
        for name, t in zip(self.input_names, leaves):
            if t.requires_grad:
                t = t.detach()
            if not t.is_cpu:
                t = t.cpu()
            if not t.is_contiguous():
                t = t.contiguous()
            feed[name] = t.numpy()  # shares the tensor's memory
        try:
            outs = self.session.run(None, feed)
        except GecError as e:
            raise type(e)(f"{self.module_name}: {e.message}", e.code) from None
        if self._out_spec is None:
            return _from_numpy(outs[0])
        return _rebuild(self._out_spec, iter([_from_numpy(o) for o in outs]))

    def __repr__(self):
        return f"<gec.torch.CompiledModule of {self.module_name}: {self.session!r}>"


def compile(module, example_inputs, dynamic_axes=None, *, input_names=None, output_names=None, opset_version=None,
            export_options=None, threads=0, **options):
    """Exports `module` with torch.onnx.export, compiles it with gec and
    returns a callable on torch tensors.

    Args:
        module (torch.nn.Module): exported in eval mode (as torch.onnx.export
            does by default); its mode is restored afterwards.
        example_inputs: a tensor or a tuple of the tensors forward takes
            (torch.onnx.export's `args`); their shapes and dtypes are those
            the compiled model takes, except for the dims in dynamic_axes.
        dynamic_axes (dict or None): torch.onnx.export's {name: {axis:
            dim name}} (or {name: [axes]}) for inputs and outputs; None
            compiles for the example shapes exactly (a static plan, fastest).
        input_names (list of str): ONNX input names; default forward's
            parameter names when they match the tensors, else input_0, ...
        output_names (list of str): default output_0, output_1, ...
        opset_version (int): ONNX opset to export (default: torch's, 14 for
            torch 1.13; gec takes 7..17).
        export_options (dict): more keyword arguments for torch.onnx.export.
        threads (int): intra-op threads (0 = all cores).
        **options: gec.compile options: opt_level (default 2), input_shapes,
            disabled_passes.

    Returns:
        CompiledModule: call it with tensors like the module.

    Raises:
        gec.InvalidArgument: example_inputs are not tensors or the module
            raises on them, or dynamic_axes names no input or output.
        gec.torch.ExportError: torch.onnx.export fails (the message names
            the module; the torch error is the __cause__).
        gec.GecError (Unsupported, InvalidModel, ...): gec cannot compile the
            exported model; the message names the module, then the node.
    """
    if not isinstance(module, _torch.nn.Module):
        raise InvalidArgument(f"gec.torch.compile: expected a torch.nn.Module, got {type(module).__name__}",
                              ErrorCode.INVALID_ARGUMENT)
    name = type(module).__name__
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    leaves = []
    _flatten(args, leaves, f"{name}: example_inputs")
    if input_names is None:
        input_names = _default_input_names(module, len(leaves))
    input_names = list(input_names)
    if len(input_names) != len(leaves):
        raise InvalidArgument(f"{name}: {len(input_names)} input_names for {len(leaves)} example tensors",
                              ErrorCode.INVALID_ARGUMENT)

    # One eager run (eval mode, no grad) gives the output structure.
    was_training = module.training
    module.eval()
    try:
        with _torch.no_grad():
            eager = module(*args)
    except Exception as e:
        raise InvalidArgument(f"{name}: the module raised on example_inputs: {type(e).__name__}: {e}",
                              ErrorCode.INVALID_ARGUMENT) from e
    finally:
        module.train(was_training)
    out_leaves = []
    out_spec = _flatten(eager, out_leaves, f"{name}: the module's output")
    if output_names is None:
        output_names = [f"output_{i}" for i in range(len(out_leaves))]
    output_names = list(output_names)
    if dynamic_axes:
        unknown = [k for k in dynamic_axes if k not in input_names and k not in output_names]
        if unknown:
            raise InvalidArgument(f"{name}: dynamic_axes names {unknown}, which are neither inputs {input_names} "
                                  f"nor outputs {output_names}", ErrorCode.INVALID_ARGUMENT)

    buf = io.BytesIO()
    try:
        _torch.onnx.export(module, args, buf, input_names=input_names, output_names=output_names,
                           dynamic_axes=dynamic_axes, opset_version=opset_version, **(export_options or {}))
    except Exception as e:
        raise ExportError(f"torch.onnx.export failed for module {name}: {type(e).__name__}: {e}",
                          ErrorCode.UNSUPPORTED, module_name=name) from e
    finally:
        module.train(was_training)
    onnx_bytes = buf.getvalue()

    try:
        compiled = _api.compile(onnx_bytes, **options)
        session = _api.Session(compiled, threads=threads)
    except GecError as e:
        raise type(e)(f"gec.torch.compile({name}): {e.message}", e.code) from None
    n_out = len(session.get_outputs())
    if n_out != len(out_leaves):
        raise ExportError(f"{name}: forward returns {len(out_leaves)} tensors but the exported model has {n_out} "
                          f"outputs", ErrorCode.UNSUPPORTED, module_name=name)
    names = [a.name for a in session.get_inputs()]
    if names != input_names:
        # torch drops inputs the graph does not use; the callable still takes every tensor.
        raise ExportError(f"{name}: the exported model's inputs {names} are not the {input_names} given (torch.onnx "
                          f"drops unused inputs)", ErrorCode.UNSUPPORTED, module_name=name)
    flat_args = all(isinstance(a, _Tensor) for a in args)
    return CompiledModule(name, session, compiled, onnx_bytes, input_names, output_names, out_spec, flat_args)
