"""A structured kernel op's `meta:` checked against its meta family (an in-place family's ops
write into their arguments), and the rule that no other op does."""
from .errors import RegistryError
from .model import as_list, replace


def _families_hint(families):
    return (
        f"meta families: {', '.join(families)}"
        if families
        else "no meta families are declared: ops.yaml's meta_families holds them"
    )


def check_meta(op, raw, families, errors):
    """`meta: <family>` on a kernel op: the signature must be one the family's meta step takes.
    Returns the op with the family's result_dtype and identity settings."""
    where = raw.line_of("meta")
    if op.kind != "kernel":
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: 'meta' applies to kernel ops only",
                "a structured kernel op is `kernel: <name>` plus `meta: <family>`",
            )
        )
        return op
    fam = families.get(op.meta)
    if fam is None:
        errors.append(
            RegistryError(where, f"{op.full_name}: unknown meta family '{op.meta}'", _families_hint(families))
        )
        return op
    names = [a.name for a in op.sig.arguments]
    for a in op.sig.arguments if not fam.custom else []:
        wanted = fam.args.get(a.name)
        if wanted is None:
            if a.type.is_tensor_list:
                errors.append(
                    RegistryError(where, f"{op.full_name}: meta '{op.meta}' takes no Tensor list ('{a.name}')")
                )
            elif a.type.is_tensor and not fam.more_tensors:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: meta '{op.meta}' reads one Tensor, self; " f"it has no place for '{a.name}'",
                    )
                )
        elif a.type.schema().replace("(a)", "") not in wanted:
            errors.append(
                RegistryError(
                    where,
                    f"{op.full_name}: meta '{op.meta}' wants '{a.name}' as "
                    f"{' or '.join(wanted)}, got {a.type.schema()}",
                )
            )
    for r in fam.required:
        if r not in names:
            errors.append(RegistryError(where, f"{op.full_name}: meta '{op.meta}' needs an argument '{r}'"))
    op = replace(op, result_dtype=str(raw.get("result_dtype", "self")))
    if op.result_dtype not in fam.results:
        errors.append(
            RegistryError(
                raw.line_of("result_dtype") if "result_dtype" in raw else where,
                f"{op.full_name}: meta '{op.meta}' has no result_dtype '{op.result_dtype}'",
                f"result_dtype: {', '.join(fam.results)}",
            )
        )
    op = replace(op, identity=bool(raw.get("identity", True)))
    if "identity" in raw and op.meta != "reduction":
        errors.append(
            RegistryError(raw.line_of("identity"), f"{op.full_name}: 'identity' applies to meta: reduction only")
        )
    if fam.mutates:
        return _check_mutating(op, raw, fam, where, errors)
    returns = [r.type.schema() for r in op.sig.returns]
    # several named results: two (values, indices), or as many as a family sizes (layer_norm's three)
    most = 3 if fam.result_sizes else 2
    if returns != ["Tensor"] and not (
        2 <= len(returns) <= most and set(returns) == {"Tensor"} and all(r.name for r in op.sig.returns)
    ):
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: a structured op returns Tensor or {most} named Tensors at most "
                "(an int64 one when named indices: (Tensor values, Tensor indices))",
            )
        )
    return op


def _check_mutating(op, raw, fam, where, errors):
    """An in-place kernel family (`mutates`): the kernel writes into the mutable arguments, so the
    op returns () or one of them, has only its function variant and no derivatives."""
    mutable = [a for a in op.sig.arguments if a.type.base == "Tensor" and a.type.mutable]
    if not mutable:
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: meta '{op.meta}' writes into its arguments, but none is " "mutable",
                "mark what the kernel writes as Tensor(a!) or Tensor(a!)[]",
            )
        )
    returns = op.sig.returns
    if returns:
        alias = returns[0].type.alias
        target = next((a for a in mutable if a.type.alias == alias and not a.type.is_list), None)
        if len(returns) != 1 or returns[0].type.is_list or not returns[0].type.mutable or target is None:
            errors.append(
                RegistryError(
                    where,
                    f"{op.full_name}: meta '{op.meta}' returns () or a mutable Tensor argument "
                    "it writes (Tensor(a!) self -> Tensor(a!))",
                )
            )
    if fam.foreach and not any(a.type.is_tensor_list for a in op.sig.arguments):
        errors.append(RegistryError(where, f"{op.full_name}: meta 'foreach' needs a Tensor[] argument"))
    if not fam.foreach:
        for a in op.sig.arguments:
            if a.type.is_tensor_list:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: meta '{op.meta}' takes no Tensor list ('{a.name}')",
                        "Tensor lists go to meta: foreach",
                    )
                )
    for key in ("variants", "derivatives"):
        if key in raw and (key == "derivatives" or as_list(raw[key]) != ["function"]):
            errors.append(
                RegistryError(
                    raw.line_of(key),
                    f"{op.full_name}: an op of meta '{op.meta}' writes into its "
                    f"arguments: it has no {'derivatives' if key == 'derivatives' else 'variants but function'}",
                )
            )
    return op


def check_writes(op, raw, errors):
    """Only an in-place meta family's ops return () or take a mutable Tensor list."""
    sig = op.sig
    sline = raw.line_of("signature")
    lists = [a.name for a in sig.arguments if a.type.is_tensor_list and a.type.mutable]
    if not sig.returns:
        errors.append(
            RegistryError(
                sline,
                f"{sig.full_name}: an op that returns () writes into its arguments: a "
                "kernel op with an in-place meta step",
                "meta: foreach (Tensor lists) or an op's own in-place step, with kernel: <name>",
            )
        )
    elif lists:
        errors.append(
            RegistryError(
                sline,
                f"{sig.full_name}: the mutable list '{lists[0]}' is written by a kernel " "op with meta: foreach only",
            )
        )
