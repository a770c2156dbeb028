; Definitions and references in CUDA source (the grammar extends C++); a function
; declared __global__ becomes a kernel in mapper/ingest/code.py.

(function_definition
  declarator: (_) @name) @definition.function

; prototypes (those inside function bodies are dropped in code.py)
(declaration
  declarator: (function_declarator) @name) @definition.function

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
