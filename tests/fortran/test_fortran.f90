! test_fortran.f90 - Fortran calls reach treeduce and give MPI's answers.
!
! A Fortran program's MPI_ALLREDUCE, MPI_REDUCE_SCATTER_BLOCK, MPI_ALLGATHER,
! MPI_REDUCE and MPI_BCAST go through the MPI library's Fortran bindings to
! the C routines, which treeduce replaces.  On random data, every result must
! equal what MPI_REDUCE_LOCAL gives over all ranks' inputs, folded in rank
! order (inputs gathered with MPI_GATHER at every root: the MPI library's own
! routine, which treeduce does not replace); MPI_ALLGATHER and MPI_BCAST must
! move the inputs exactly.  Datatypes and ops:
!   MPI_ALLREDUCE   MPI_INTEGER (SUM, MAX, BXOR), MPI_INTEGER8 (SUM, MIN),
!                   MPI_REAL (SUM, MAX), MPI_DOUBLE_PRECISION (SUM, PROD),
!                   MPI_COMPLEX (SUM, PROD), MPI_DOUBLE_COMPLEX (PROD),
!                   MPI_LOGICAL (LAND, LOR, LXOR), MPI_2INTEGER and
!                   MPI_2DOUBLE_PRECISION (MINLOC, MAXLOC); counts 1, 7, 1000,
!                   out of place and MPI_IN_PLACE;
!   the pieces      MPI_REDUCE_SCATTER_BLOCK (DOUBLE PRECISION SUM, INTEGER
!                   MAX), MPI_REDUCE (DOUBLE COMPLEX PROD, LOGICAL LOR) at
!                   every root, MPI_ALLGATHER (INTEGER8), MPI_BCAST (REAL)
!                   from every root.
! With 2 ranks every comparison is exact (a op b = b op a bit for bit); with
! more, floating SUM and PROD allow rounding (relative 1e-4 single, 1e-12
! double).
!
! Built twice: with "use mpi", and with -DTRD_F08 with "use mpi_f08".
! Prints one line per failed check and, on rank 0, "N passed, M failed" on
! the error unit, after treeduce's notes (TREEDUCE_VERBOSE) in that stream.
! Exits with status 1 if a check failed.
program test_fortran
#ifdef TRD_F08
    use mpi_f08
#else
    use mpi
#endif
    use iso_fortran_env, only: error_unit, int64
    implicit none

#ifdef TRD_F08
#define DATATYPE type(MPI_Datatype)
#define OPERATION type(MPI_Op)
#else
#define DATATYPE integer
#define OPERATION integer
#endif

    integer, parameter :: nmax = 1000
    integer, parameter :: counts(3) = [1, 7, nmax]
    integer :: ierr, rank, nprocs, k, ip, root
    integer :: npass = 0, nfail = 0, tally(2)
    integer, allocatable :: tallies(:, :)
    logical :: inplace

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
    call seed_random()

    do k = 1, size(counts)
        do ip = 0, 1
            inplace = ip == 1
            call check_integer(MPI_SUM, 'MPI_SUM', counts(k), inplace)
            call check_integer(MPI_MAX, 'MPI_MAX', counts(k), inplace)
            call check_integer(MPI_BXOR, 'MPI_BXOR', counts(k), inplace)
            call check_integer8(MPI_SUM, 'MPI_SUM', counts(k), inplace)
            call check_integer8(MPI_MIN, 'MPI_MIN', counts(k), inplace)
            call check_real(MPI_SUM, 'MPI_SUM', counts(k), inplace)
            call check_real(MPI_MAX, 'MPI_MAX', counts(k), inplace)
            call check_double(MPI_SUM, 'MPI_SUM', counts(k), inplace)
            call check_double(MPI_PROD, 'MPI_PROD', counts(k), inplace)
            call check_complex(MPI_SUM, 'MPI_SUM', counts(k), inplace)
            call check_complex(MPI_PROD, 'MPI_PROD', counts(k), inplace)
            call check_double_complex(counts(k), inplace)
            call check_logical(MPI_LAND, 'MPI_LAND', counts(k), inplace)
            call check_logical(MPI_LOR, 'MPI_LOR', counts(k), inplace)
            call check_logical(MPI_LXOR, 'MPI_LXOR', counts(k), inplace)
            call check_2integer(MPI_MINLOC, 'MPI_MINLOC', counts(k), inplace)
            call check_2integer(MPI_MAXLOC, 'MPI_MAXLOC', counts(k), inplace)
            call check_2double(MPI_MINLOC, 'MPI_MINLOC', counts(k), inplace)
            call check_2double(MPI_MAXLOC, 'MPI_MAXLOC', counts(k), inplace)
        end do
        call check_rsb(counts(k))
        call check_allgather(counts(k))
        do root = 0, nprocs - 1
            call check_reduce(counts(k), root)
            call check_bcast(counts(k), root)
        end do
    end do

    ! the tally through the MPI library's own MPI_GATHER
    allocate (tallies(2, nprocs))
    call MPI_GATHER([npass, nfail], 2, MPI_INTEGER, tallies, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                    ierr)
    tally = sum(tallies, dim=2)
    flush (6)
    if (rank == 0) then
        write (error_unit, '(i0, a, i0, a)') tally(1), ' passed, ', tally(2), ' failed'
        flush (error_unit)
    end if
    call MPI_FINALIZE(ierr)
    if (rank == 0 .and. tally(2) > 0) stop 1

contains

    subroutine seed_random()
        integer :: n, i
        integer, allocatable :: seed(:)
        call random_seed(size=n)
        allocate (seed(n))
        seed = [(7919 * (rank + 1) + 104729 * i, i = 1, n)]
        call random_seed(put=seed)
    end subroutine

    ! A check's verdict: counted, and a line for a failure.
    subroutine verdict(ok, routine, tname, opname, n, inplace)
        logical, intent(in) :: ok, inplace
        character(*), intent(in) :: routine, tname, opname
        integer, intent(in) :: n
        if (ok) then
            npass = npass + 1
        else
            nfail = nfail + 1
            write (*, '(a, i0, 7a, i0, a, l1)') 'FAIL rank=', rank, ' ', routine, ' type=', tname, &
                ' op=', opname, ' count=', n, ' in_place=', inplace
        end if
    end subroutine

    ! Whether a and e agree: exactly with 2 ranks, within rounding with more.
    logical function close_r(a, e)
        real, intent(in) :: a(:), e(:)
        if (nprocs <= 2) then
            close_r = all(a == e)
        else
            close_r = all(abs(a - e) <= 1e-4 * max(1.0, abs(e)))
        end if
    end function

    logical function close_d(a, e)
        double precision, intent(in) :: a(:), e(:)
        if (nprocs <= 2) then
            close_d = all(a == e)
        else
            close_d = all(abs(a - e) <= 1d-12 * max(1d0, abs(e)))
        end if
    end function

    ! Random integers in [lo, hi].
    subroutine random_ints(x, lo, hi)
        integer, intent(out) :: x(:)
        integer, intent(in) :: lo, hi
        real :: u(size(x))
        call random_number(u)
        x = lo + int(u * (hi - lo + 1))
    end subroutine

    ! ---- MPI_ALLREDUCE -------------------------------------------------------

    subroutine check_integer(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        integer :: x(n), every(n, nprocs), ref(n), res(n), r
        call random_ints(x, -100000, 100000)
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_INTEGER, every, n, MPI_INTEGER, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_INTEGER, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. all(res == ref), 'MPI_ALLREDUCE', 'MPI_INTEGER', &
                     opname, n, inplace)
    end subroutine

    subroutine check_integer8(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        integer(int64) :: x(n), every(n, nprocs), ref(n), res(n)
        integer :: lo(n), hi(n), r
        call random_ints(lo, 0, 2**30)
        call random_ints(hi, -2**20, 2**20)
        x = int(hi, int64) * 2_int64**32 + lo
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_INTEGER8, every, n, MPI_INTEGER8, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_INTEGER8, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_INTEGER8, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_INTEGER8, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. all(res == ref), 'MPI_ALLREDUCE', 'MPI_INTEGER8', &
                     opname, n, inplace)
    end subroutine

    subroutine check_real(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        real :: x(n), every(n, nprocs), ref(n), res(n)
        integer :: r
        call random_number(x)
        x = (x - 0.5) * 200
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_REAL, every, n, MPI_REAL, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_REAL, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_REAL, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_REAL, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. close_r(res, ref), 'MPI_ALLREDUCE', 'MPI_REAL', &
                     opname, n, inplace)
    end subroutine

    subroutine check_double(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        double precision :: x(n), every(n, nprocs), ref(n), res(n)
        integer :: r
        call random_number(x)
        x = 0.9d0 + x / 5 ! factors near 1: products stay in range
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_DOUBLE_PRECISION, every, n, MPI_DOUBLE_PRECISION, r, &
                            MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_DOUBLE_PRECISION, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. close_d(res, ref), 'MPI_ALLREDUCE', &
                     'MPI_DOUBLE_PRECISION', opname, n, inplace)
    end subroutine

    subroutine check_complex(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        complex :: x(n), every(n, nprocs), ref(n), res(n)
        real :: re(n), im(n)
        integer :: r
        call random_number(re)
        call random_number(im)
        x = cmplx(0.8 + re / 2, im - 0.5)
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_COMPLEX, every, n, MPI_COMPLEX, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_COMPLEX, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_COMPLEX, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_COMPLEX, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. close_r(real(res), real(ref)) .and. &
                     close_r(aimag(res), aimag(ref)), 'MPI_ALLREDUCE', 'MPI_COMPLEX', opname, n, &
                     inplace)
    end subroutine

    subroutine check_double_complex(n, inplace)
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        complex(kind(1d0)) :: x(n), every(n, nprocs), ref(n), res(n)
        double precision :: re(n), im(n)
        integer :: r
        call random_number(re)
        call random_number(im)
        x = cmplx(0.8d0 + re / 2, im - 0.5d0, kind(1d0))
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_DOUBLE_COMPLEX, every, n, MPI_DOUBLE_COMPLEX, r, &
                            MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_DOUBLE_COMPLEX, MPI_PROD, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, &
                               ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. close_d(real(res), real(ref)) .and. &
                     close_d(aimag(res), aimag(ref)), 'MPI_ALLREDUCE', 'MPI_DOUBLE_COMPLEX', &
                     'MPI_PROD', n, inplace)
    end subroutine

    subroutine check_logical(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        logical :: x(n), every(n, nprocs), ref(n), res(n)
        real :: u(n)
        integer :: r
        call random_number(u)
        x = u < 0.6
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_LOGICAL, every, n, MPI_LOGICAL, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_LOGICAL, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_LOGICAL, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_LOGICAL, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. all(res .eqv. ref), 'MPI_ALLREDUCE', &
                     'MPI_LOGICAL', opname, n, inplace)
    end subroutine

    ! Few distinct values and indices: ties, where the smaller index wins.
    subroutine check_2integer(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        integer :: x(2, n), every(2, n, nprocs), ref(2, n), res(2, n), r
        call random_ints(x(1, :), -2, 2)
        call random_ints(x(2, :), 0, 3)
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_2INTEGER, every, n, MPI_2INTEGER, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, :, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, :, r), ref, n, MPI_2INTEGER, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. all(res == ref), 'MPI_ALLREDUCE', 'MPI_2INTEGER', &
                     opname, n, inplace)
    end subroutine

    subroutine check_2double(op, opname, n, inplace)
        OPERATION, intent(in) :: op
        character(*), intent(in) :: opname
        integer, intent(in) :: n
        logical, intent(in) :: inplace
        double precision :: x(2, n), every(2, n, nprocs), ref(2, n), res(2, n)
        integer :: v(n), loc(n), r
        call random_ints(v, -2, 2)
        call random_ints(loc, 0, 3)
        x(1, :) = v / 4d0
        x(2, :) = loc
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_2DOUBLE_PRECISION, every, n, MPI_2DOUBLE_PRECISION, r, &
                            MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, :, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, :, r), ref, n, MPI_2DOUBLE_PRECISION, op, ierr)
        end do
        if (inplace) then
            res = x
            call MPI_ALLREDUCE(MPI_IN_PLACE, res, n, MPI_2DOUBLE_PRECISION, op, MPI_COMM_WORLD, &
                               ierr)
        else
            call MPI_ALLREDUCE(x, res, n, MPI_2DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
        end if
        call verdict(ierr == MPI_SUCCESS .and. all(res == ref), 'MPI_ALLREDUCE', &
                     'MPI_2DOUBLE_PRECISION', opname, n, inplace)
    end subroutine

    ! ---- The pieces ----------------------------------------------------------

    ! This rank's block of n of the reduction of every rank's n * nprocs.
    subroutine check_rsb(n)
        integer, intent(in) :: n
        double precision :: x(n * nprocs), every(n * nprocs, nprocs), ref(n * nprocs), res(n)
        integer :: ix(n * nprocs), iall(n * nprocs, nprocs), iref(n * nprocs), ires(n), r
        call random_number(x)
        call random_ints(ix, -100000, 100000)
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n * nprocs, MPI_DOUBLE_PRECISION, every, n * nprocs, &
                            MPI_DOUBLE_PRECISION, r, MPI_COMM_WORLD, ierr)
            call MPI_GATHER(ix, n * nprocs, MPI_INTEGER, iall, n * nprocs, MPI_INTEGER, r, &
                            MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        iref = iall(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n * nprocs, MPI_DOUBLE_PRECISION, MPI_SUM, ierr)
            call MPI_REDUCE_LOCAL(iall(:, r), iref, n * nprocs, MPI_INTEGER, MPI_MAX, ierr)
        end do
        call MPI_REDUCE_SCATTER_BLOCK(x, res, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
        call verdict(ierr == MPI_SUCCESS .and. close_d(res, ref(rank * n + 1:rank * n + n)), &
                     'MPI_REDUCE_SCATTER_BLOCK', 'MPI_DOUBLE_PRECISION', 'MPI_SUM', n, .false.)
        call MPI_REDUCE_SCATTER_BLOCK(ix, ires, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
        call verdict(ierr == MPI_SUCCESS .and. all(ires == iref(rank * n + 1:rank * n + n)), &
                     'MPI_REDUCE_SCATTER_BLOCK', 'MPI_INTEGER', 'MPI_MAX', n, .false.)
    end subroutine

    ! The reduction at root; other ranks' receive buffers untouched.
    subroutine check_reduce(n, root)
        integer, intent(in) :: n, root
        complex(kind(1d0)) :: x(n), every(n, nprocs), ref(n), res(n)
        double precision :: re(n), im(n)
        logical :: b(n), ball(n, nprocs), bref(n), bres(n)
        real :: u(n)
        integer :: r
        call random_number(re)
        call random_number(im)
        x = cmplx(0.8d0 + re / 2, im - 0.5d0, kind(1d0))
        call random_number(u)
        b = u < 0.3
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_DOUBLE_COMPLEX, every, n, MPI_DOUBLE_COMPLEX, r, &
                            MPI_COMM_WORLD, ierr)
            call MPI_GATHER(b, n, MPI_LOGICAL, ball, n, MPI_LOGICAL, r, MPI_COMM_WORLD, ierr)
        end do
        ref = every(:, 1)
        bref = ball(:, 1)
        do r = 2, nprocs
            call MPI_REDUCE_LOCAL(every(:, r), ref, n, MPI_DOUBLE_COMPLEX, MPI_PROD, ierr)
            call MPI_REDUCE_LOCAL(ball(:, r), bref, n, MPI_LOGICAL, MPI_LOR, ierr)
        end do
        res = (7d0, 7d0)
        call MPI_REDUCE(x, res, n, MPI_DOUBLE_COMPLEX, MPI_PROD, root, MPI_COMM_WORLD, ierr)
        if (rank == root) then
            call verdict(ierr == MPI_SUCCESS .and. close_d(real(res), real(ref)) .and. &
                         close_d(aimag(res), aimag(ref)), 'MPI_REDUCE', 'MPI_DOUBLE_COMPLEX', &
                         'MPI_PROD', n, .false.)
        else
            call verdict(ierr == MPI_SUCCESS .and. all(res == (7d0, 7d0)), 'MPI_REDUCE', &
                         'MPI_DOUBLE_COMPLEX', 'MPI_PROD', n, .false.)
        end if
        bres = b
        if (rank == root) then
            call MPI_REDUCE(MPI_IN_PLACE, bres, n, MPI_LOGICAL, MPI_LOR, root, MPI_COMM_WORLD, ierr)
            call verdict(ierr == MPI_SUCCESS .and. all(bres .eqv. bref), 'MPI_REDUCE', &
                         'MPI_LOGICAL', 'MPI_LOR', n, .true.)
        else
            call MPI_REDUCE(b, bres, n, MPI_LOGICAL, MPI_LOR, root, MPI_COMM_WORLD, ierr)
            call verdict(ierr == MPI_SUCCESS, 'MPI_REDUCE', 'MPI_LOGICAL', 'MPI_LOR', n, .true.)
        end if
    end subroutine

    subroutine check_allgather(n)
        integer, intent(in) :: n
        integer(int64) :: x(n), every(n, nprocs), res(n, nprocs)
        integer :: lo(n), hi(n), r
        call random_ints(lo, 0, 2**30)
        call random_ints(hi, -2**29, 2**29)
        x = int(hi, int64) * 2_int64**32 + lo
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_INTEGER8, every, n, MPI_INTEGER8, r, MPI_COMM_WORLD, ierr)
        end do
        call MPI_ALLGATHER(x, n, MPI_INTEGER8, res, n, MPI_INTEGER8, MPI_COMM_WORLD, ierr)
        call verdict(ierr == MPI_SUCCESS .and. all(res == every), 'MPI_ALLGATHER', 'MPI_INTEGER8', &
                     '-', n, .false.)
        res = 0
        res(:, rank + 1) = x
        call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, res, n, MPI_INTEGER8, &
                           MPI_COMM_WORLD, ierr)
        call verdict(ierr == MPI_SUCCESS .and. all(res == every), 'MPI_ALLGATHER', 'MPI_INTEGER8', &
                     '-', n, .true.)
    end subroutine

    subroutine check_bcast(n, root)
        integer, intent(in) :: n, root
        real :: x(n), every(n, nprocs)
        integer :: r
        call random_number(x)
        do r = 0, nprocs - 1
            call MPI_GATHER(x, n, MPI_REAL, every, n, MPI_REAL, r, MPI_COMM_WORLD, ierr)
        end do
        call MPI_BCAST(x, n, MPI_REAL, root, MPI_COMM_WORLD, ierr)
        call verdict(ierr == MPI_SUCCESS .and. all(x == every(:, root + 1)), 'MPI_BCAST', &
                     'MPI_REAL', '-', n, .false.)
    end subroutine

end program
