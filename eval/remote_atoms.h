#pragma once
// The atoms of the remote worker protocol (eval/remote_protocol.h says what each message
// carries). CAF 0.17.6 atoms are values of at most 10 characters and need no type ID, so they
// cross the network as CAF's builtin atom type; this header is all the protocol shares with
// CAF, and only the .cc files that speak it include it.
#include "caf/atom.hpp"
#include "caf/type_id.hpp"

CAF_BEGIN_TYPE_ID_BLOCK(arc_remote, caf::first_custom_type_id)
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, hello_atom, "hello")
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, login_atom, "login")
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, attach_atom, "attach")
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, peaks_atom, "peaks")
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, compile_atom, "compile")
  CAF_ADD_ATOM(arc_remote, arc::eval::remote, evaluate_atom, "evaluate")
CAF_END_TYPE_ID_BLOCK(arc_remote)
