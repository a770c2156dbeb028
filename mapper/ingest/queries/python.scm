; Definitions and references in Python source.
; Capture names: definition.<kind> on the defining node, reference.<kind> on the referencing
; node (for calls: the callee expression). Names, qualified names, signatures and scopes are
; derived in mapper/ingest/_python.py from the captured nodes.

(class_definition) @definition.class

(function_definition) @definition.function

; module-level and class-level constants: NAME = value, and each name of A, B = x, y
(module
  (expression_statement
    (assignment left: [(identifier) (pattern_list) (tuple_pattern)]) @definition.constant))

(class_definition
  body: (block
    (expression_statement
      (assignment left: [(identifier) (pattern_list) (tuple_pattern)]) @definition.constant)))

(call
  function: [(identifier) (attribute)] @reference.call)

; self.NAME = value inside methods: gives instance attributes their types
(assignment
  left: (attribute object: (identifier) attribute: (identifier))) @reference.attribute

; a name bound to a constructed or annotated value (x = Cls(...), x = make(...), x: Cls = ...):
; gives locals (and module-level instances) their types
(assignment left: (identifier) right: (call function: [(identifier) (attribute)])) @reference.local
(assignment left: (identifier) type: (type)) @reference.local
; a function returning a constructed value (return Cls(...)): a factory, or a pytest fixture
(return_statement (call function: [(identifier) (attribute)]) @reference.returned)

(import_statement) @reference.import
(import_from_statement) @reference.import

; names that may denote a class, a constant or an enum member: Name, mod.NAME, Enum.MEMBER
; (every identifier and a.b attribute: _python_refs.names keeps the capitalised ones, which is
; cheaper than a #match? predicate run on each identifier)
(identifier) @reference.name
(attribute object: (identifier) attribute: (identifier)) @reference.name
; mod.Enum.MEMBER (an enum member named through its module; the predicate runs on a.b.c only)
((attribute object: (attribute object: (identifier) attribute: (identifier))
    attribute: (identifier)) @reference.name
  (#match? @reference.name "^[a-z_][a-z0-9_]*[.][A-Z][A-Za-z0-9_]*[.][A-Z][A-Za-z0-9_]*$"))

; a local alias of a class: k = KernelId (k.MEMBER then names KernelId.MEMBER)
(assignment left: (identifier) right: (identifier)) @reference.alias

; decorators: @name, @mod.name, @name(args)
(decorator) @reference.decorator
