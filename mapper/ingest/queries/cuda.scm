; Definitions and references in CUDA source (the grammar extends C++); a function
; declared __global__ becomes a kernel in mapper/ingest/code.py.

(function_definition
  declarator: (_) @name) @definition.function

; prototypes (those inside function bodies are dropped in code.py)
(declaration
  declarator: (function_declarator) @name) @definition.function

(declaration
  declarator: (pointer_declarator
    declarator: (function_declarator)) @name) @definition.function

(field_declaration_list
  (field_declaration
    declarator: (function_declarator) @name) @definition.function)

(class_specifier
  name: (_) @name
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: (_) @name
  body: (field_declaration_list)) @definition.struct

(type_definition
  type: (struct_specifier body: (field_declaration_list))
  declarator: (type_identifier) @name) @definition.struct

(enum_specifier
  name: (_) @name
  body: (enumerator_list)) @definition.enum

(type_definition
  type: (enum_specifier body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum

(enumerator
  name: (identifier) @name) @definition.enumerator

(preproc_def
  name: (identifier) @name) @definition.macro

(preproc_function_def
  name: (identifier) @name) @definition.macro

(call_expression
  function: [(identifier) (field_expression) (qualified_identifier) (template_function)] @name) @reference.call

(preproc_include
  path: (_) @name) @reference.include

; --- how layers bind in drivers (mapper/ingest/_cbindings.py) ---
; an upper-case name passed to a call: a candidate ioctl/constant use, resolved when building
(argument_list
  (identifier) @name
  (#match? @name "^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")) @reference.use

; an upper-case name assigned or initialised from (``result->op = GGML_OP_ADD``): a candidate
; enumerator use, resolved when building
(assignment_expression
  right: (identifier) @name
  (#match? @name "^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")) @reference.use

(init_declarator
  value: (identifier) @name
  (#match? @name "^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")) @reference.use

; switch (cmd) { case NAME: … } — the enclosing function dispatches NAME
(case_statement
  value: (identifier) @name) @reference.dispatch

; struct T v = { .slot = fn, fn, … } — function-pointer tables (and ioctl tables)
(init_declarator
  value: (initializer_list) @name) @reference.table

; function-pointer fields: the slots of an ops table
(field_declaration
  declarator: (function_declarator
    declarator: (parenthesized_declarator) @name)) @definition.slot

(field_declaration
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (parenthesized_declarator) @name))) @definition.slot

; class D : public B — overrides are resolved when building
(class_specifier
  name: (_) @name
  (base_class_clause) @bases) @reference.inherit
