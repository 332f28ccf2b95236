//! Failure diagnosis (pure): evidence in, a diagnosis out. A catalogue of rules, each with a
//! stable id, its plane, the fields it reads and its advice.
